# SPDX-License-Identifier: Apache-2.0
"""Start-up: waits for torch to be imported, then activates the integration
(mtier._torch) if libmtier.so.0 is loaded. Costs nothing in a program that
never imports torch: one finder on sys.meta_path that answers only for
"torch" (with the spec the other finders give, its loader wrapped) and
removes itself once torch's module code has run.

When the integration cannot start (no libmtier.so.0 in the process, a
torch without what it needs, an error of its own), one line on stderr says
so and why, verbose or not: a trainer must not silently run without the
lookahead it was started with. MTIER_VERBOSE=1 also says when it is active."""

import importlib.abc
import os
import sys

_state = {"status": "waiting for torch to be imported"}
_FALSE = ("", "0", "false", "no", "off")


def _flag(name, default):
    """A boolean variable, with the values the library takes for false."""
    return os.environ.get(name, default).strip().lower() not in _FALSE


def verbose():
    return _flag("MTIER_VERBOSE", "0")


def say(msg):
    """One line on stderr; never raises (a closed or broken stderr)."""
    try:
        print(f"mtier: {msg}", file=sys.stderr, flush=True)
    except Exception:  # noqa: BLE001
        pass


def status():
    """One line: whether the torch integration is active, and why not."""
    return _state["status"]


def current_batch():
    """The batch number the integration is at (0 before it started)."""
    try:
        from mtier import _torch
        return _torch.current_batch()
    except Exception:  # noqa: BLE001
        return 0


def _activate(torch):
    try:
        from mtier import _torch
        _state["status"] = _torch.activate(torch)
    except Exception as e:  # noqa: BLE001 - never break the trainer
        _state["status"] = f"inactive: the integration failed to start ({e!r})"
    if verbose() or _state["status"].startswith("inactive"):
        say(f"torch integration {_state['status']}")
    return _state["status"].startswith("active")


def start_explicitly(torch):
    """For mtier.lookahead(): starts the integration now if sitecustomize
    has not (a program run with LD_PRELOAD alone). Whether it is active."""
    if not _flag("MTIER_TORCH", "1"):
        _state["status"] = "off (MTIER_TORCH=0)"
        return False
    if _state["status"].startswith("active"):
        return True
    try:
        from mtier import _lib
        if _lib.load() is None:  # no mtier here: nothing to start, nothing to say
            _state["status"] = "inactive: libmtier.so.0 is not loaded in this process"
            return False
    except Exception:  # noqa: BLE001
        return False
    return _activate(torch)


class _TorchLoader(importlib.abc.Loader):
    """torch's own loader, which runs _activate once the module has run.
    Anything else is the inner loader's (resources, get_source...)."""

    def __init__(self, inner, watcher):
        self._inner = inner
        self._watcher = watcher

    def create_module(self, spec):
        return self._inner.create_module(spec)

    def exec_module(self, module):
        self._inner.exec_module(module)
        _uninstall(self._watcher)
        if getattr(module, "__name__", None) == "torch":
            _activate(module)

    def __getattr__(self, name):
        return getattr(self._inner, name)


class _TorchWatcher(importlib.abc.MetaPathFinder):
    """Finds nothing itself: the spec for "torch" comes from the finders
    after it, its loader wrapped. A lookup that does not import (e.g.
    importlib.util.find_spec) leaves the watcher in place."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch":
            return None
        try:
            for finder in list(sys.meta_path):
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(fullname, path, target)
                if spec is None:
                    continue
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _TorchLoader(spec.loader, self)
                return spec
        except Exception:  # noqa: BLE001 - let the import system try without us
            return None
        return None


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
