"""Timing the baseline and the candidate side by side, and summarising samples.

measure_interleaved runs inside the sandbox worker (and, for cached baselines, in the pytest
process); summarize, rse_of_median, speedup and speedup_interval are pure.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from pytest_kernelbench.nested import leaves, map_leaves

MAX_ROUNDS = 100_000
RSE_MIN_ROUNDS = 20  # fewer samples give no usable spread estimate
RSE_CHECK_EVERY = 10  # at least this many rounds between checks of the stopping rule
RSE_CHECK_GROWTH = 1.25  # and checks grow apart, so that sorting stays cheap on long runs
# A timing whose verdict is already clear stops on a looser precision: every side's median known
# to this many times the target RSE, and the speedup's interval wholly above or below each
# threshold a verdict or the summary reads. Runs of the same candidates differ by more (2.3% at
# the median on one H200, docs/performance.md) than the looser median errs, so the rounds it
# saves bought no repeatability; candidates near a threshold still get the full precision.
DECIDED_RSE_FACTOR = 2.0
GRAPH_REPLAYS_TO_WARM = 3
# Warm-up lasts warmup_s and then until a round is no more than 10% faster than the one before
# (caches, allocator and library autotuning settle), within WARMUP_MAX_ROUNDS and the budget.
WARMUP_SETTLED = 0.10
WARMUP_MAX_ROUNDS = 10
# At least this many: the sides hold the last output of each of their three input draws, so
# memory reaches its steady state (one output freed per call) only after the fourth round.
WARMUP_MIN_ROUNDS = 4
TIMINGS = ("events", "graph", "auto")
# Each timed call on CUDA starts on an idle GPU: the L2 flush is waited for before the start
# event, so the events bracket the call as its host runs it, launches included, as upstream
# KernelBench times a call (a synchronize, then the events around it). While the flush ran on
# behind the host, a call whose launch took about as long as the flush was timed partly behind
# it: its samples split between its GPU time and its launch time (docs/performance.md,
# "Launch-bound timings"). FLUSH_SETTLES off is that race, for benchmarks/launch_bound_timing.py.
FLUSH_SETTLES = True


@dataclass(frozen=True)
class Summary:
    median_s: float
    iqr_s: float
    mean_s: float
    min_s: float
    n: int
    rse: float

    def as_dict(self) -> dict:
        return {"median_s": self.median_s, "iqr_s": self.iqr_s, "mean_s": self.mean_s,
                "min_s": self.min_s, "n": self.n, "rse": self.rse}


def _quartiles(ordered: list[float]) -> tuple[float, float]:
    if len(ordered) < 2:
        return ordered[0], ordered[0]
    q1, _, q3 = statistics.quantiles(ordered, n=4, method="inclusive")
    return q1, q3


def rse_of_median(samples_s: list[float]) -> float:
    """Relative standard error of the median: 1.2533 * sigma / sqrt(n) / median.

    sigma is estimated from the IQR (IQR / 1.349 for a normal core), so a few outliers -- a
    preempted call, a clock change -- do not keep the measurement running.
    """
    if len(samples_s) < 4:
        return math.inf
    ordered = sorted(samples_s)
    median = statistics.median(ordered)
    if median <= 0:
        return math.inf
    q1, q3 = _quartiles(ordered)
    return 1.2533 * (q3 - q1) / 1.349 / math.sqrt(len(ordered)) / median


def summarize(samples_s: list[float]) -> Summary:
    ordered = sorted(samples_s)
    q1, q3 = _quartiles(ordered)
    return Summary(statistics.median(ordered), q3 - q1, statistics.fmean(ordered),
                   ordered[0], len(ordered), rse_of_median(ordered))


def speedup(baseline: Summary, candidate: Summary) -> float:
    """Ratio of medians: how many times faster the candidate is than the baseline."""
    return baseline.median_s / candidate.median_s if candidate.median_s > 0 else float("inf")


# How far apart two runs put the speedup of identical code, as the reference set reads it: on
# two CPU cores 0.93-1.07 (docs/performance.md), on an H200 within 3% of 1 (CUDA-L1's warm
# runs). A speedup is shown to be below p only beyond that, whatever one run's interval says.
RESOLUTION = {"cpu": 0.07, "cuda": 0.03}


# Where bursts timed by the harness's own clock set the speedup (no interval), how far off it
# can be: on a GPU, one pair of them on a busy host read up to 25% off; on two CPU cores, each
# side's fastest burst, confirmed by a second, read identical code (level2/23_Conv3d_GroupNorm_
# Mean, whose calls allocate about 0.5 GB) 0.772x: allocation and page faults dominate a call.
BURST_SPREAD = {"cpu": 1.5, "cuda": 1.25}
# Speedups of identical code timed with too few calls for an interval have read 0.83-1.19 on
# two CPU cores (the main job; on an H200, level-3 models given five rounds read 0.88-1.16):
# such a speedup counts as above p only beyond this.
NO_INTERVAL_SPREAD = 0.20


def below(ratio: float, interval: Sequence[float | None] | None, p: float, device: str) -> bool:
    """Whether a timing shows a speedup at or below p: its 95% interval lies at or below p,
    and the speedup below p by more than the device's run-to-run RESOLUTION. Without an
    interval (None: the harness's clock set the figure), below p by more than BURST_SPREAD."""
    if interval is None:
        return ratio * burst_spread(device) < p
    high = interval[1] if interval[1] is not None else math.inf
    return high <= p and ratio < p * (1 - RESOLUTION[device.split(":")[0]])


def burst_spread(device: str) -> float:
    return BURST_SPREAD[device.split(":")[0]]


def margin(interval: Sequence[float | None] | None, device: str) -> float:
    """How far above p a speedup with no interval must read to count as above it (above()):
    BURST_SPREAD where the harness's clock set it (None), NO_INTERVAL_SPREAD where too few timed
    calls gave none; 0 where it has one, whose lower end must then clear p."""
    if interval is None:
        return burst_spread(device) - 1
    return 0.0 if _finite(interval) else NO_INTERVAL_SPREAD


def above(speedup: float, interval: Sequence[float | None] | None, p: float,
          margin_fraction: float) -> bool:
    """Whether a timing shows a speedup above p: its 95% interval lies above p; without one,
    the speedup is above p by more than its margin()."""
    if interval is not None and _finite(interval):
        return (interval[0] or 0.0) > p
    return speedup > p * (1 + margin_fraction)


def _finite(interval: Sequence[float | None]) -> bool:
    return interval[1] is not None and math.isfinite(interval[1])


def resolution_words(ratio: float, interval: Sequence[float | None] | None, p: float,
                     device: str) -> str:
    """Why below() or above() could not decide, for the item's message."""
    if interval is None:
        return (f"the harness's clock set the speedup, and its bursts can be "
                f"{burst_spread(device) - 1:.0%} off")
    if not _finite(interval):
        return ("too few timed calls for an interval, and such readings vary by "
                f"{NO_INTERVAL_SPREAD:.0%} (more --benchmark-max-time decides it)")
    if ratio > p:
        return f"95% interval {interval[0]:.3f}-{interval[1]:.3f} holds p"
    resolution = RESOLUTION[device.split(":")[0]]
    return (f"95% interval {interval[0]:.3f}-{interval[1]:.3f}; identical code reads within "
            f"{resolution:.0%} of p between runs on this device")


# Two bursts of a side this close to each other confirm its fastest as its undisturbed time.
BURST_CONFIRM = 1.20


def clock_verdict(reported: float, baseline_walls: Sequence[float],
                  candidate_walls: Sequence[float], slack: float) -> tuple[str, float]:
    """What bursts timed by the harness's own clock say of a reported speedup: ('stands' or
    'replaced', the bursts' speedup), or ('undecided', nan) until each side's fastest burst is
    confirmed by a second within BURST_CONFIRM of it.

    Only a disturbance slows a burst (a page fault, another process on the core), so each
    side's fastest is its truest time: a pair of bursts on a CPU can be 2x apart, their
    fastest are a few percent apart. The reported speedup stands within slack of theirs.
    """
    sides = [sorted(baseline_walls), sorted(candidate_walls)]
    if any(len(walls) < 2 or walls[1] > BURST_CONFIRM * walls[0] for walls in sides):
        return "undecided", math.nan
    clock = sides[0][0] / sides[1][0]
    return ("stands" if reported <= slack * clock else "replaced"), clock


def speedup_interval(baseline: Summary, candidate: Summary, z: float = 1.96) -> tuple[float, float]:
    """An approximate 95% interval for the ratio of medians.

    The log of a ratio has a standard error of sqrt(rse_a^2 + rse_b^2) when the two medians
    are independent; samples taken in turns are positively correlated, so this errs wide.
    """
    ratio = speedup(baseline, candidate)
    spread = math.hypot(baseline.rse, candidate.rse)
    if not math.isfinite(ratio) or not math.isfinite(spread):
        return 0.0, math.inf
    return ratio * math.exp(-z * spread), ratio * math.exp(z * spread)


@dataclass(frozen=True)
class Turn:
    """One side of the interleaved measurement: only `run` is inside the timed region."""

    run: Callable[[], object]
    prepare: Callable[[], None] = lambda: None
    finish: Callable[[object], None] = lambda output: None


@dataclass
class Measurement:
    samples_s: dict[str, list[float]]
    stopped: str  # "rse" (precise enough), "decided", "budget" (time spent) or "max_rounds"
    rounds: int = 0
    notes: list[str] = field(default_factory=list)
    warmup_s: float = 0.0  # of the measurement's time, the warm-up rounds'


def decided(samples_s: dict[str, list[float]], thresholds: Sequence[float],
            loose_rse: float) -> bool:
    """Whether a baseline-against-candidate timing already says on which side of every
    threshold its speedup lies, each side's median known to loose_rse."""
    if not thresholds or set(samples_s) != {"baseline", "candidate"}:
        return False
    baseline, candidate = (summarize(samples_s[side]) for side in ("baseline", "candidate"))
    if max(baseline.rse, candidate.rse) > loose_rse:
        return False
    low, high = speedup_interval(baseline, candidate)
    return all(not low <= threshold <= high for threshold in thresholds)


def measure_interleaved(turns: dict[str, Turn], device: str, budget_s: float, min_rounds: int,
                        target_rse: float = 0.0, warmup_s: float = 0.05,
                        max_rounds: int = MAX_ROUNDS,
                        thresholds: Sequence[float] = ()) -> Measurement:
    """Per-call times in seconds for each turn, run in turns (A B A B ...).

    Turns make clock and thermal drift hit every side alike. On CUDA each call is bracketed
    by events after flushing the L2 cache, and the device is synchronized after every call so
    that no work is left running into the next measurement. Rounds go on until every side's
    median is known to target_rse (0 turns that rule off), a baseline-against-candidate timing
    is decided about the speedup thresholds (DECIDED_RSE_FACTOR), the budget is spent, or
    max_rounds (at least min_rounds) ran.
    """
    timer = make_timer(device)
    names = list(turns)

    def one_call(turn: Turn) -> float:
        turn.prepare()
        elapsed, output = timer.time(turn.run)
        turn.finish(output)
        return elapsed

    started = time.perf_counter()
    warm_rounds = 0
    previous: list[float] = []
    while True:
        latest = [one_call(turns[name]) for name in names]
        warm_rounds += 1
        elapsed = time.perf_counter() - started
        if warm_rounds >= WARMUP_MIN_ROUNDS and elapsed >= warmup_s and (
                still(previous, latest) or warm_rounds >= WARMUP_MAX_ROUNDS or elapsed >= budget_s):
            break
        previous = latest
    warmup_s = time.perf_counter() - started
    samples: dict[str, list[float]] = {name: [] for name in names}
    deadline = time.perf_counter() + budget_s
    rounds = 0
    next_check = max(RSE_MIN_ROUNDS, min_rounds)
    while True:
        for name in names:
            samples[name].append(one_call(turns[name]))
        rounds += 1
        if rounds < min_rounds:
            continue
        if target_rse > 0 and rounds >= next_check:
            if all(rse_of_median(s) <= target_rse for s in samples.values()):
                return Measurement(samples, "rse", rounds, warmup_s=warmup_s)
            if decided(samples, thresholds, DECIDED_RSE_FACTOR * target_rse):
                return Measurement(samples, "decided", rounds, warmup_s=warmup_s)
            next_check = max(rounds + RSE_CHECK_EVERY, int(rounds * RSE_CHECK_GROWTH))
        if time.perf_counter() >= deadline:
            return Measurement(samples, "budget", rounds, warmup_s=warmup_s)
        if rounds >= max_rounds:
            return Measurement(samples, "max_rounds", rounds, warmup_s=warmup_s)


def still(previous: list[float], latest: list[float]) -> bool:
    """Whether calls stopped getting faster: no side gained more than WARMUP_SETTLED."""
    return bool(previous) and all(now >= before * (1 - WARMUP_SETTLED)
                                  for before, now in zip(previous, latest))


def capture_graph(fn: Callable[[], object], device: str) -> Callable[[], object]:
    """Capture fn's GPU work in a CUDA graph; the returned callable replays it.

    The replay returns the tensors fn returned during capture, which every replay overwrites.
    Raises whatever capture raises (e.g. work launched on the legacy default stream).
    """
    import torch

    with torch.cuda.device(device):  # the graph's pool and capture stream live on this device
        side = torch.cuda.Stream(device)
        side.wait_stream(torch.cuda.current_stream(device))
        with torch.cuda.stream(side):  # warm-up off the default stream, as capture requires
            for _ in range(GRAPH_REPLAYS_TO_WARM):
                fn()
        torch.cuda.current_stream(device).wait_stream(side)
        torch.cuda.synchronize(device)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            output = fn()
        torch.cuda.synchronize(device)

    def replay() -> object:
        graph.replay()
        return output

    return replay


def run_burst(model, input_sets: list[list], calls: int, device: str, sync: bool = True) -> None:
    """calls back-to-back forwards over rotating input sets, then a device-wide sync (sync:
    else the caller's, after it read how long issuing the calls took).

    The caller times this with its own clock: no timer inside the burst can be tampered with,
    and the final sync waits for work on every stream.
    """
    import torch

    with torch.no_grad():
        for index in range(calls):
            model(*input_sets[index % len(input_sets)])
    if sync:
        sync_device(device)


def sync_device(device: str) -> None:
    """Wait for the work of every stream of a CUDA device (a CPU's work is done)."""
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize(device)


def timed_burst(model, input_sets: list[list], calls: int, device: str) -> float | None:
    """run_burst; on a CPU also timed by the worker's own timer (the one its measurements use),
    in seconds, for host_was_slow. On CUDA nothing reads that figure: None."""
    if device.startswith("cuda"):
        run_burst(model, input_sets, calls, device)
        return None
    elapsed, _ = HostTimer().time(lambda: run_burst(model, input_sets, calls, device))
    return elapsed


def make_timer(device: str):
    return CudaTimer(device) if device.startswith("cuda") else HostTimer()


def host_was_slow(reported_s: float, wall_s: float, timed_s: float, baseline_reported_s: float,
                  baseline_wall_s: float, device: str) -> bool:
    """Whether a candidate whose burst (wall_s per call, by the harness's clock) is too slow
    for its reported median was slowed by its host, not hiding time: the worker's own timer
    agrees with the harness's clock over that burst (no tampered timer, no work escaping it;
    a GPU burst has no such figure, timed_s inf), and the baseline's burst in the same worker
    was slowed as much against its own report (so work handed to a thread or stream between
    timed calls, which does not slow the baseline, still shows)."""
    if not plausible(timed_s, wall_s, device):
        return False
    host_factor = baseline_wall_s / baseline_reported_s if baseline_reported_s > 0 else 1.0
    return plausible(reported_s * max(host_factor, 1.0), wall_s, device)


def plausible(reported_median_s: float, burst_s_per_call: float, device: str) -> bool:
    """Whether a reported per-call time can be true, given a wall-clock burst of the same calls.

    A burst's time per call adds the loop's overhead (and on CUDA, where a burst's calls queue
    behind each other, whatever the host does between them), so it may exceed the report; more
    than twice the report plus that overhead means time went missing from it (a tampered
    timer, work on another stream or thread).
    """
    return burst_s_per_call <= 2 * reported_median_s + burst_overhead_s(device)


def burst_overhead_s(device: str) -> float:
    """What a burst's loop may add to each call's time beyond the calls themselves."""
    return 20e-6 if device.startswith("cuda") else 5e-6


PACE_STEPS = 100_000  # host_pace's loop: about 5 ms of CPython on a current core


def host_pace(steps: int = PACE_STEPS) -> int:
    """A fixed piece of pure-Python work: nothing of torch, so a candidate's patch of torch's
    operators does not reach it, yet a process the host runs slowly (a busy core, a lower
    clock) runs it slowly.
    Timed by the pytest process in the worker and in itself, it says how much slower the
    worker ran the harness's own code (judge/clock.py: unslow_baseline)."""
    total = 0
    for step in range(steps):
        total += step % 7
    return total


# --- what one side runs: shared by the worker and the pytest process --------------------------

def forward_async(model, inputs: list):
    import torch

    with torch.no_grad():
        return model(*inputs)


def refill(buffers: list, source: list) -> None:
    import torch

    for buffer, value in zip(buffers, source):
        if isinstance(buffer, torch.Tensor):
            buffer.copy_(value)


def poison(output) -> None:
    """Overwrite a finished output so that memory handed out later cannot carry its values."""
    for tensor in leaves(output):
        tensor.fill_(float("nan") if tensor.is_floating_point() else -1)


def clone_output(output):
    return map_leaves(output, lambda tensor: tensor.clone())


def aliases(output, buffers: list) -> bool:
    """Whether a (nested) output shares memory with any of the tensors in buffers."""
    pointers = {b.untyped_storage().data_ptr() for b in leaves(buffers)}
    return any(t.untyped_storage().data_ptr() in pointers for t in leaves(output))


def outputs_agree(expected, got) -> bool:
    import torch

    if isinstance(expected, torch.Tensor):
        if not isinstance(got, torch.Tensor) or expected.shape != got.shape:
            return False
        if not expected.is_floating_point():
            return bool(torch.equal(expected, got))
        return bool(torch.allclose(expected, got, rtol=1e-4, atol=1e-5, equal_nan=True))
    if isinstance(expected, (list, tuple)):
        return isinstance(got, (list, tuple)) and len(expected) == len(got) and \
            all(outputs_agree(a, b) for a, b in zip(expected, got))
    return True


class RotatingSide:
    """One model called on fixed input buffers whose contents rotate through several draws.

    The buffers keep their addresses (a CUDA graph, or a cache keyed on pointers, sees the same
    tensors); refilling them before each call is outside the timed region.
    """

    def __init__(self, model, input_sets: list[list], graph: bool, device: str,
                 on_call: Callable[[int], None] = lambda index: None):
        import torch

        self.on_call = on_call  # told the draw of each call, before it (outside the timed region)
        self.sets = input_sets
        self.index = 0
        self.buffers = [x.clone() if isinstance(x, torch.Tensor) else x for x in input_sets[0]]
        call = lambda: forward_async(model, self.buffers)  # noqa: E731
        self.graph = graph
        self.call = capture_graph(call, device) if graph else call
        if graph:
            self._check_replay(call)

    def _check_replay(self, eager: Callable[[], object]) -> None:
        """A replay must reproduce an eager call on other inputs.

        Work launched outside the capturing stream (e.g. on the legacy default stream, which
        does not synchronise with it) runs once during capture and never again on replay.
        """
        refill(self.buffers, self.sets[-1])
        expected = clone_output(eager())
        if not outputs_agree(expected, self.call()):
            raise RuntimeError("a CUDA graph replay does not reproduce an eager call (work "
                               "launched outside the captured stream?)")
        refill(self.buffers, self.sets[0])

    def prepare(self) -> None:
        self.index = (self.index + 1) % len(self.sets)
        refill(self.buffers, self.sets[self.index])
        self.on_call(self.index)

    def turn(self, finish: Callable[[object], None]) -> Turn:
        return Turn(run=self.call, prepare=self.prepare, finish=finish)

    def call_on(self, index: int) -> object:
        """One untimed call on draw `index`."""
        self.index = index
        refill(self.buffers, self.sets[index])
        self.on_call(index)
        return self.call()


class HostTimer:
    def time(self, fn: Callable[[], object]) -> tuple[float, object]:
        start = time.perf_counter()
        output = fn()
        return time.perf_counter() - start, output


class CudaTimer:
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
        # Events go on the timed device's stream, whatever device is current: an event on an
        # idle stream of another GPU would time nothing.
        stream = self.torch.cuda.current_stream(self.device)
        self.flush.zero_()
        if FLUSH_SETTLES:
            self.torch.cuda.synchronize(self.device)
        self.start.record(stream)
        output = fn()
        self.end.record(stream)
        self.torch.cuda.synchronize(self.device)
        return self.start.elapsed_time(self.end) / 1e3, output
