"""The one place that wraps torch's private ninja runner (`cpp_extension._run_ninja_build`).

Every extension build of `load_inline` and `load` goes through it, so a process that imports
candidates wraps it to see each build: to echo a failed build's compiler lines (builds.py), to
replay a recorded failure (builds.py), to keep unchanged sources from rebuilding (sources.py)
and to point gcc at a precompiled header (pch.py). Each wrapper is installed once per process,
however often its installer is called and whatever was wrapped around it since.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Runner = Callable[..., Any]


def wrap_runner(mark: str, wrap: Callable[[Runner], Runner]) -> None:
    """Replace the runner with wrap(runner), unless a wrapper with this mark is in it already
    (or this torch has no such runner)."""
    import torch.utils.cpp_extension as cpp_extension

    run = getattr(cpp_extension, "_run_ninja_build", None)
    marks: frozenset[str] = getattr(run, "kb_marks", frozenset())
    if run is None or mark in marks:
        return
    wrapped = wrap(run)
    wrapped.kb_marks = marks | {mark}  # type: ignore[attr-defined]
    cpp_extension._run_ninja_build = wrapped
