"""Start-up: waits for torch to be imported, then activates the integration
(mtier._torch) if libmtier.so is loaded. Costs nothing in a program that
never imports torch: one finder on sys.meta_path that answers only for
"torch" and removes itself then."""

import importlib.machinery
import os
import sys

_state = {"status": "waiting for torch to be imported"}


def _flag(name, default):
    return os.environ.get(name, default) not in ("", "0")


def verbose():
    return _flag("MTIER_VERBOSE", "0")


def say(msg):
    print(f"mtier: {msg}", file=sys.stderr, flush=True)


def status():
    """One line: whether the torch integration is active, and why not."""
    return _state["status"]


def _activate(torch):
    try:
        from mtier import _torch
        _state["status"] = _torch.activate(torch)
    except Exception as e:  # noqa: BLE001 - never break the trainer
        _state["status"] = f"inactive: the integration failed to start ({e!r})"
    if verbose():
        say(f"torch integration {_state['status']}")


class _TorchWatcher:
    """A meta path finder that finds nothing itself: when "torch" is looked
    up it takes the spec the other finders give and runs _activate once
    torch's own module code has run."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch":
            return None
        _uninstall(self)
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        inner = spec.loader.exec_module

        def exec_module(module):
            inner(module)
            _activate(module)

        spec.loader.exec_module = exec_module
        return spec


def _uninstall(finder):
    try:
        sys.meta_path.remove(finder)
    except ValueError:
        pass


def install():
    """Called by mtier's sitecustomize."""
    if not _flag("MTIER_TORCH", "1"):
        _state["status"] = "off (MTIER_TORCH=0)"
        return
    if "torch" in sys.modules:
        _activate(sys.modules["torch"])
        return
    sys.meta_path.insert(0, _TorchWatcher())
