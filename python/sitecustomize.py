# SPDX-License-Identifier: Apache-2.0
"""mtier's sitecustomize: starts mtier's PyTorch integration, then runs the
sitecustomize this one shadows (Debian ships one in /etc/python3.X).

`mtier run` puts this file's directory first on PYTHONPATH; a plain
LD_PRELOAD user sets PYTHONPATH to it (see mtier(1), "PyTorch"). It must
never break a Python program: it does nothing until torch is imported, and
any error of its own is caught. When the integration cannot load (the
`mtier` package is not importable by this Python, e.g. a virtual
environment without it; an error in it), one line on stderr says so and
why, verbose or not: the program then runs without the lookahead.
"""


def _mtier_start():
    try:
        import mtier._boot
        mtier._boot.install()
    except Exception as e:  # noqa: BLE001 - never break the program
        import sys
        hint = ""
        if isinstance(e, ImportError) and getattr(e, "name", None) in ("mtier", "mtier._boot"):
            hint = (f" ({sys.executable} has no mtier package: install python3-mtier, or "
                    "pip install mtier's python/ directory into this environment)")
        try:
            print(f"mtier: torch integration not loaded: {e!r}{hint}", file=sys.stderr, flush=True)
        except Exception:  # noqa: BLE001 - a closed stderr
            pass


def _chain():
    """Runs the next sitecustomize on sys.path (the one this file shadows),
    as `sitecustomize`, as site.py would have."""
    import importlib.machinery
    import importlib.util
    import os
    import sys
    here = os.path.dirname(os.path.realpath(__file__))
    path = [p for p in sys.path if os.path.realpath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is None or spec.loader is None or (
            spec.origin and os.path.realpath(spec.origin) == os.path.realpath(__file__)):
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


_mtier_start()
_chain()
