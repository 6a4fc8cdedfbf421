"""A static look at a candidate's source: constructs worth a second look, reported as information.

Nothing here decides a verdict (run-time checks do that); it tells a reader where to look when a
result seems too good.
"""

from __future__ import annotations

import re

SUSPICIOUS = [
    (re.compile(r"\bcuda\.Stream\b|\bStream\(\)"), "creates CUDA streams (work may escape timing)"),
    (re.compile(r"\bCUDAGraph\b|\bcuda\.graph\(|\bmake_graphed_callables\b"),
     "captures CUDA graphs (a replay reuses the addresses it was captured with)"),
    (re.compile(r"\bimport threading\b|\bThread\("), "starts threads"),
    (re.compile(r"\bimport multiprocessing\b|\bsubprocess\b|\bos\.fork\b"), "starts processes"),
    (re.compile(r"^[ \t]*(torch|time|sys|os)(\.\w+)+[ \t]*=[^=]", re.M),
     "assigns to an attribute of torch/time/sys/os (monkeypatching)"),
    (re.compile(r"\bsetattr\(\s*(torch|time)\b"), "setattr on torch/time (monkeypatching)"),
    (re.compile(r"\bsys\.modules\b|\bgc\.get_objects\b|\binspect\.stack\b|\bsys\._getframe\b"),
     "inspects the interpreter (modules, frames or live objects)"),
    (re.compile(r"\bdata_ptr\(\)"), "reads tensor pointers (caches keyed on pointers?)"),
    (re.compile(r"\btorch\.empty(_like)?\("), "allocates uninitialised tensors"),
    (re.compile(r"\bexcept\b[^\n]*:\s*\n(\s*#[^\n]*\n)*\s*(return|pass)\b|\bexcept\s*:"),
     "swallows exceptions (a fallback path?)"),
    (re.compile(r"\bos\._exit\b|\bsys\.exit\b"), "can end the process"),
    (re.compile(r"\bctypes\b"), "uses ctypes"),
]


def scan_source(source: str) -> list[str]:
    """Human-readable notes, one per kind of suspicious construct found, with its first line."""
    notes = []
    for pattern, text in SUSPICIOUS:
        match = pattern.search(source)
        if match:
            line = source.count("\n", 0, match.start()) + 1
            notes.append(f"line {line}: {text}")
    return notes
