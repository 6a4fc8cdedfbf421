"""The verdict upstream KernelBench's own rules give, computed beside ours from the same run.

Upstream judges a candidate correct when, on every trial, its output has the reference's shape
and `torch.allclose(output, expected, atol, rtol)` holds; it lets forward change its inputs, runs
no cheat checks, and reports speedup as the mean of the baseline's event timings over the mean
of the candidate's. A published figure can then be reproduced under those rules and checked
under ours. Which version's tolerance applies is a choice: v0 (the paper's) uses 1e-2, main uses
1e-4 for fp32 outputs and 1e-2 for fp16 and bf16 (precision.PROFILES).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pytest_kernelbench.isolation import wire
from pytest_kernelbench.precision import PROFILES
from pytest_kernelbench.record import Record
from pytest_kernelbench.suite.correctness import BLOCK


@dataclass
class UpstreamVerdict:
    rules: str
    compiled: bool = False
    correct: bool | None = None  # None: this run's data cannot tell (e.g. a tensor subclass)
    speedup: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"rules": self.rules, "compiled": self.compiled, "correct": self.correct,
                "speedup": self.speedup}


def allclose_only(expected: Any, got: Any, rules: str, precision: str = "fp32") -> bool | None:
    """Upstream's check of one trial's output; None when got is a placeholder for a tensor
    subclass, whose values this harness never reads."""
    import torch

    atol, rtol = PROFILES[rules][precision]
    if wire.subclass_names(got):
        return None
    if isinstance(expected, torch.Tensor):
        if not isinstance(got, torch.Tensor) or got.shape != expected.shape \
                or got.dtype != expected.dtype:
            return False
        return _allclose(got.to(expected.device), expected, atol, rtol)
    if isinstance(expected, (list, tuple)):
        if not isinstance(got, (list, tuple)) or len(got) != len(expected):
            return False
        results = [allclose_only(e, g, rules, precision) for e, g in zip(expected, got)]
        return None if None in results and all(r is not False for r in results) \
            else all(r is True for r in results)
    return bool(expected == got)


def _allclose(got: Any, expected: Any, atol: float, rtol: float) -> bool:
    """torch.allclose(got, expected): on a CPU, read in blocks with the same elementwise rule.
    Over the whole of a 1 GiB output its temporaries took seconds and gigabytes."""
    import torch

    if expected.device.type != "cpu" or not expected.is_floating_point():
        return bool(torch.allclose(got, expected, atol=atol, rtol=rtol))
    got_flat, expected_flat = got.reshape(-1), expected.reshape(-1)
    return all(bool(torch.isclose(got_flat[start:start + BLOCK], expected_flat[start:start + BLOCK],
                                  rtol=rtol, atol=atol).all())
               for start in range(0, expected_flat.numel(), BLOCK))


def speedup_of_means(baseline_samples_s: list[float], candidate_samples_s: list[float]) -> float | None:
    """Upstream's speedup: mean baseline time over mean candidate time."""
    if not baseline_samples_s or not candidate_samples_s:
        return None
    candidate = statistics.fmean(candidate_samples_s)
    return statistics.fmean(baseline_samples_s) / candidate if candidate > 0 else None


def as_upstream_record(record: Record) -> Record:
    """The record as upstream's rules see it (unknowns count as not): its compiled, correct and
    speedup. Whether it is fast under them is the verdict's own (fast.is_upstream_fast), never
    read from this harness's speedup interval or margin."""
    verdict: Mapping[str, Any] = record.get("upstream") or {}
    return {**record, "compiled": bool(verdict.get("compiled")),
            "correct": bool(verdict.get("correct")), "speedup": verdict.get("speedup")}
