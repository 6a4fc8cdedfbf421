"""Run at the startup of every Python interpreter that a confined process starts, directly or
not: its environment puts this folder first on PYTHONPATH (confine.watch_children). The
interpreter watches itself as the confined process does, reporting refused attempts and
started processes to that process's file; then the sitecustomize this one stands in front of,
if there is one, runs as it would have."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def watch() -> None:
    """confine.py loaded from its file, not through the package: the package's own __init__
    imports the whole harness, too much for every interpreter a build starts."""
    spec = importlib.util.spec_from_file_location(
        "_kb_child_confine", os.path.join(os.path.dirname(HERE), "confine.py"))
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it runs
    spec.loader.exec_module(module)
    module.watch_as_child()


def run_the_next_sitecustomize() -> None:
    rest = [entry for entry in sys.path if os.path.abspath(entry or os.curdir) != HERE]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


if os.environ.get("KB_CONFINE_WATCH"):
    try:
        watch()
    except Exception:  # noqa: BLE001 - the child runs on unwatched rather than not at all
        pass
run_the_next_sitecustomize()
