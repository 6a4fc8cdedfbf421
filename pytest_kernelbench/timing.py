"""Timing the baseline and the candidate side by side, and summarising samples.

measure_interleaved runs inside the sandbox worker; summarize and speedup are pure.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

MAX_ROUNDS = 100_000


@dataclass(frozen=True)
class Summary:
    median_s: float
    iqr_s: float
    mean_s: float
    min_s: float
    n: int

    def as_dict(self) -> dict:
        return {"median_s": self.median_s, "iqr_s": self.iqr_s, "mean_s": self.mean_s,
                "min_s": self.min_s, "n": self.n}


def summarize(samples_s: list[float]) -> Summary:
    ordered = sorted(samples_s)
    if len(ordered) >= 2:
        q1, _, q3 = statistics.quantiles(ordered, n=4, method="inclusive")
    else:
        q1 = q3 = ordered[0]
    return Summary(statistics.median(ordered), q3 - q1, statistics.fmean(ordered),
                   ordered[0], len(ordered))


def speedup(baseline: Summary, candidate: Summary) -> float:
    """Ratio of medians: how many times faster the candidate is than the baseline."""
    return baseline.median_s / candidate.median_s if candidate.median_s > 0 else float("inf")


@dataclass(frozen=True)
class Turn:
    """One side of the interleaved measurement: only `run` is inside the timed region."""

    run: Callable[[], object]
    prepare: Callable[[], None] = lambda: None
    finish: Callable[[object], None] = lambda output: None


def measure_interleaved(turns: dict[str, Turn], device: str, budget_s: float, min_rounds: int,
                        warmup_s: float = 0.05) -> dict[str, list[float]]:
    """Per-call times in seconds for each turn, run in turns (A B A B ...).

    Turns make clock and thermal drift hit every side alike. On CUDA each call is bracketed
    by events after flushing the L2 cache, and the device is synchronized after every call so
    that no work is left running into the next measurement.
    """
    timer = _CudaTimer(device) if device.startswith("cuda") else _HostTimer()
    names = list(turns)

    def one_call(turn: Turn) -> float:
        turn.prepare()
        elapsed, output = timer.time(turn.run)
        turn.finish(output)
        return elapsed

    deadline = time.perf_counter() + warmup_s
    warm_rounds = 0
    while warm_rounds < 2 or time.perf_counter() < deadline:
        for name in names:
            one_call(turns[name])
        warm_rounds += 1
    samples: dict[str, list[float]] = {name: [] for name in names}
    deadline = time.perf_counter() + budget_s
    rounds = 0
    while rounds < min_rounds or (time.perf_counter() < deadline and rounds < MAX_ROUNDS):
        for name in names:
            samples[name].append(one_call(turns[name]))
        rounds += 1
    return samples


def run_burst(model, input_sets: list[list], calls: int, device: str) -> None:
    """calls back-to-back forwards over rotating input sets, then a device-wide sync.

    The caller times this with its own clock: no timer inside the burst can be tampered with,
    and the final sync waits for work on every stream.
    """
    import torch

    with torch.no_grad():
        for index in range(calls):
            model(*input_sets[index % len(input_sets)])
    if device.startswith("cuda"):
        torch.cuda.synchronize(device)


def plausible(reported_median_s: float, burst_s_per_call: float, device: str) -> bool:
    """Whether a reported per-call time can be true, given a wall-clock burst of the same calls.

    A burst's time per call adds launch and loop overhead (on CUDA, where events exclude the
    host), so it may exceed the report; more than twice the report plus that overhead means
    time went missing from it (a tampered timer, work on another stream or thread).
    """
    overhead_s = 20e-6 if device.startswith("cuda") else 5e-6
    return burst_s_per_call <= 2 * reported_median_s + overhead_s


class _HostTimer:
    def time(self, fn: Callable[[], object]) -> tuple[float, object]:
        start = time.perf_counter()
        output = fn()
        return time.perf_counter() - start, output


class _CudaTimer:
    def __init__(self, device: str):
        import torch

        self.torch = torch
        self.device = torch.device(device)
        l2_bytes = torch.cuda.get_device_properties(self.device).L2_cache_size
        # Twice the L2, so every call starts from a cold cache, as a real pipeline would.
        self.flush = torch.empty(max(2 * l2_bytes, 1 << 20), dtype=torch.uint8, device=self.device)
        self.start = torch.cuda.Event(enable_timing=True)
        self.end = torch.cuda.Event(enable_timing=True)

    def time(self, fn: Callable[[], object]) -> tuple[float, object]:
        self.flush.zero_()
        self.start.record()
        output = fn()
        self.end.record()
        self.torch.cuda.synchronize(self.device)
        return self.start.elapsed_time(self.end) / 1e3, output
