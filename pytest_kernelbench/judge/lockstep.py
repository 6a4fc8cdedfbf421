"""Judging against a reference that keeps state between calls.

Some references answer a call from what earlier calls left behind (KernelBench v0's
VanillaRNN overwrites its hidden state at every call): their right answer depends on the
sequence of calls, not on the inputs alone. Where a fresh reference answers a given sequence
the same way every time, a candidate is judged in lockstep: the worker reports the input seed
of every call its model has made, and a twin of the reference, built fresh from the same seed,
is called on the same draws in the same order. A cached or replayed output is still wrong:
the reference's answer moves on at every call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

FLAG = ("lockstep: the reference keeps state between calls; judged against a fresh reference "
        "called on the candidate's inputs in the candidate's order")


class Lockstep:
    """A reference twin that follows one call sequence, replaying it from a fresh model when a
    sequence does not extend the one it followed (a new candidate, a new worker)."""

    def __init__(self, fresh_model: Callable[[], Any], inputs_for: Callable[[int], list[Any]]):
        self._fresh_model = fresh_model
        self._inputs_for = inputs_for
        self._inputs: dict[int, list[Any]] = {}
        self._model: Any = None
        self._followed: list[int] = []  # the seeds the twin has been called on, in order
        self._outputs: dict[int, Any] = {}  # position (1-based) -> output, kept when asked for

    def output_at(self, calls: Sequence[int], position: int | None = None) -> Any:
        """The reference's answer at call `position` (1-based; default: the last) of the
        sequence of input seeds `calls`."""
        position = len(calls) if position is None else position
        if not 1 <= position <= len(calls):
            raise ValueError(f"call {position} of a sequence of {len(calls)}")
        shared = common_prefix(self._followed, calls)
        self._outputs = {at: out for at, out in self._outputs.items() if at <= shared}
        if position in self._outputs:
            return self._outputs[position]
        if len(self._followed) > shared or len(self._followed) >= position:
            self._model, self._followed = None, []  # the twin went elsewhere: start afresh
        if self._model is None:
            self._model = self._fresh_model()
        while len(self._followed) < position:
            seed = calls[len(self._followed)]
            output = self._call(seed)
            self._followed.append(seed)
            if len(self._followed) == position:
                self._outputs[position] = output
        return self._outputs[position]

    def _call(self, seed: int) -> Any:
        import torch

        if seed not in self._inputs:
            self._inputs[seed] = self._inputs_for(seed)
        with torch.no_grad():
            return self._model(*self._inputs[seed])


def common_prefix(first: Sequence[int], second: Sequence[int]) -> int:
    """How many leading elements the two sequences share."""
    shared = 0
    for a, b in zip(first, second):
        if a != b:
            break
        shared += 1
    return shared


def reproducible(fresh_model: Callable[[], Any], inputs: list[Any], agree: Callable[[Any, Any], bool],
                 calls: int = 3) -> bool:
    """Whether two fresh references called `calls` times on the same inputs answer alike at
    every call: then their answers depend on the call sequence alone."""
    import torch

    with torch.no_grad():
        first, second = fresh_model(), fresh_model()
        return all(agree(first(*inputs), second(*inputs)) for _ in range(calls))
