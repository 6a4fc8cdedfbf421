"""The speed stage: baseline and candidate timed in turns in the worker, then what the timing
returned checked (its outputs, the harness's clock: clock.py). What it leaves for the attribute
stage is a `Timed`."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_kernelbench import faults
from pytest_kernelbench.gpu import timing
from pytest_kernelbench.isolation import wire
from pytest_kernelbench.isolation.sandbox import Fault, Reply
from pytest_kernelbench.judge import baselines, clock, correct_stage, upstream
from pytest_kernelbench.judge.answers import TIMING_INPUT_SETS
from pytest_kernelbench.judge.context import StageContext
from pytest_kernelbench.judge.outcome import Outcome, cheat, failed, skipped_after
from pytest_kernelbench.record import (
    Record,
    add_flag,
    charge,
    charged,
    copy_of,
    upstream_correct,
)
from pytest_kernelbench.settings import Settings
from pytest_kernelbench.suite.discovery import Case

UPSTREAM_PERF_TRIALS = 100  # timed calls of upstream's evaluation scripts (num_perf_trials)
AUTO_GRAPH_BELOW_S = 50e-6  # --kb-timing=auto: graphs for baselines faster than this per call


@dataclass(frozen=True)
class Timed:
    """A checked timing, for the attribute stage: the speedup the checks left, their notes for
    the record's flags, and the candidate's samples."""

    ratio: float
    notes: list[str]
    candidate_samples_s: list[float]


@dataclass(frozen=True)
class BaselineCache:
    """--kb-baseline-cache as this run uses it: the keys timed afresh in this run
    (--kb-retime-baseline re-times each once), and the fields that name a baseline."""

    retimed: set[str]
    thresholds: list[float]  # the speedups a verdict or the summary compares against
    fields_extra: dict[str, Any]  # the run's device facts (gpu, driver) for the cache key


def timing_mode(ctx: StageContext, baseline_wall_s: float, notes: list[str]) -> str:
    """events or graph, for this problem, from --kb-timing and the device."""
    wanted = ctx.settings.timing
    if ctx.reference.lockstep is not None and wanted != "events":
        # a replayed graph reads the state its capture saw, never the state calls leave
        notes.append("timed with events: the reference keeps state between calls")
        return "events"
    if not ctx.device.startswith("cuda"):
        if wanted == "graph":
            notes.append("CUDA graphs need a CUDA device: timed with events")
        return "events"
    if wanted == "auto":
        return "graph" if baseline_wall_s < AUTO_GRAPH_BELOW_S else "events"
    return wanted


def speed_case(ctx: StageContext, case: Case, checked: Outcome,
               cache: BaselineCache) -> tuple[Outcome, Timed | None]:
    """Time baseline and candidate in turns, then check what the timing returned. The Outcome,
    and the Timed for the attribute stage when the checks passed."""
    if not checked.passed:
        skipped = skipped_after(checked, "correct")
        if times_for_upstream(ctx.settings, skipped.record):
            time_for_upstream(ctx, case, skipped.record, cache)
        return skipped, None
    record = copy_of(checked.record)
    notes: list[str] = []
    seeds = ctx.timing_seeds()
    with charged(record, "facts", "timing_phases"):
        here_s = ctx.reference.wall_s(case, seeds)
        ctx.reference.set_aside(case, seeds)
    record["baseline_wall_time"] = here_s
    record["baseline_issue_time"] = ctx.reference.issue_s()
    how = timing_mode(ctx, here_s, notes)
    measured = time_worker(ctx, case, record, seeds, how, cache)
    if isinstance(measured, Fault) and how == "graph":
        notes.append(f"CUDA graph capture failed ({measured.message}): timed with events")
        how = "events"
        if ctx.channel.sandbox.child_pid is None:  # stopped: the capture may have broken it
            notes.append("its worker was started afresh after the failed capture and ran its "
                         "correctness trials again before the events timing")
            correct_stage.run_again(ctx, case, checked.record)
        measured = time_worker(ctx, case, record, seeds, how, cache)
    if isinstance(measured, Fault):
        return failed(record, measured.status, f"while timing: {measured.message}",
                      measured.details), None
    reply, baseline_samples = measured
    samples = reply.header["samples_s"]
    assert record["upstream"] is not None
    record["upstream"] = {**record["upstream"], "speedup": upstream.speedup_of_means(
        baseline_samples, samples["candidate"])}
    baseline = timing.summarize(baseline_samples)
    candidate = timing.summarize(samples["candidate"])
    ratio = timing.speedup(baseline, candidate)
    record.update({
        "speedup": ratio, "baseline_time": baseline.median_s,
        "candidate_time": candidate.median_s, "timing": how,
        "timing_stopped": reply.header.get("stopped"),
        "baseline_source": "interleaved" if "baseline" in samples else "cache",
        "baseline_stats": baseline.as_dict(), "candidate_stats": candidate.as_dict(),
        "speedup_interval": list(timing.speedup_interval(baseline, candidate))})
    if reply.header.get("reused_output"):
        notes.append("returns the same buffer on every call (as a replayed CUDA graph's "
                     "static output does): an output the caller keeps changes at its next call")
    return check_timing(ctx, case, record, reply, seeds, how, ratio, here_s, notes)


def check_timing(ctx: StageContext, case: Case, record: Record, reply: Reply, seeds: list[int],
                 how: str, ratio: float, here_s: float,
                 notes: list[str]) -> tuple[Outcome, Timed | None]:
    """What a timing returned, checked: its outputs, the harness's clock, the baseline's pace
    in the candidate's process. The verdict when one fails; otherwise the speedup they leave
    stands for the attribute stage."""
    with charged(record, "check_outputs", "timing_phases"):
        caught = check_timed_outputs(ctx, case, record, reply)
    if caught is not None:
        return caught, None
    with charged(record, "check_clock", "timing_phases"):
        return check_clocks(ctx, clock.Bursts(ctx, case, record, seeds), reply, how, ratio,
                            here_s, notes)


def check_clocks(ctx: StageContext, bursts: clock.Bursts, reply: Reply, how: str, ratio: float,
                 here_s: float, notes: list[str]) -> tuple[Outcome, Timed | None]:
    """The harness's clock against the timing (clock.check_clock), and the baseline's pace in
    the candidate's process against this one's (clock.unslow_baseline)."""
    record = bursts.record
    samples = reply.header["samples_s"]
    baseline_s, candidate_s = record["baseline_time"], record["candidate_time"]
    assert baseline_s is not None and candidate_s is not None
    interleaved = "baseline" in samples
    clocked = clock.check_clock(bursts, candidate_s, how,
                                baseline_s if interleaved else None, notes)
    if isinstance(clocked, Outcome):
        return clocked, None
    wall_s, worker_baseline_s, host_slowed = clocked
    if interleaved:
        if worker_baseline_s is None:  # not measured by the clock check
            worker_baseline_s = bursts.wall_s("baseline", baseline_s)
        ratio = clock.unslow_baseline(bursts, ratio, here_s, worker_baseline_s, notes)
    if ctx.device == "cpu" or host_slowed:
        ratio = clock.bound_by_harness_clock(bursts, ratio, wall_s, worker_baseline_s, notes)
    # unknown unless read
    record.update({"custom_kernels": None, "torch_only": None, "kernel_attribution": None})
    return Outcome(faults.PASSED, record=record), Timed(ratio, notes, samples["candidate"])


def check_timed_outputs(ctx: StageContext, case: Case, record: Record,
                        reply: Reply) -> Outcome | None:
    """A cheat verdict when the output of a timed call, as returned, is wrong for its inputs
    (cached, replayed, or read before the inputs were written)."""
    ctx.reference.output(case, ctx.input_seed(0))  # the problem's facts, loaded
    if ctx.reference.stochastic:
        add_flag(record, "timed outputs not checked: the reference draws random numbers in "
                 "forward, so only the seeded correctness trials have one right answer")
        return None
    calls = reply.header.get("calls")
    for item, value in zip(reply.header["timed_outputs"], reply.extra["timed_outputs"]):
        seed = item["seed"]
        verdict = ctx.answers.judge(case, seed, value, record, calls, item.get("call"))
        if verdict is not None:
            return cheat(record, "the output of a timed call is wrong (cached, replayed "
                         f"or reused?): input seed {seed}: {verdict.message}")
    return None


def times_for_upstream(settings: Settings, record: Record) -> bool:
    """Whether a case our verdict failed is timed all the same, for upstream's speedup alone:
    upstream's rules pass it, and --kb-upstream-timing asks for it (such timings hold the
    device alone for a figure no verdict of ours reads)."""
    return settings.upstream_timing and bool(upstream_correct(record))


def time_for_upstream(ctx: StageContext, case: Case, record: Record,
                      cache: BaselineCache) -> None:
    """Time a candidate that only upstream's rules pass (e.g. it changes its inputs), for the
    upstream speedup alone: events, means, no checks, and no more rounds than upstream's
    scripts time (these timings hold the device alone, for a figure beside the verdict: 74 of
    a CUDA-L1 run's 185, most of them races)."""
    seeds = ctx.timing_seeds()
    # the problem and its reference loaded; not its facts (ReferenceSide.wall_s): a burst, a
    # graph capture and a cost count, under the device held alone, that no verdict reads
    ctx.reference.output(case, seeds[0])
    measured = time_worker(ctx, case, record, seeds, "events", cache,
                           max_rounds=UPSTREAM_PERF_TRIALS)
    if not isinstance(measured, Fault):
        reply, baseline_samples = measured
        assert record["upstream"] is not None
        record["upstream"] = {**record["upstream"], "speedup": upstream.speedup_of_means(
            baseline_samples, reply.header["samples_s"]["candidate"])}


def time_worker(ctx: StageContext, case: Case, record: Record, seeds: list[int], how: str,
                cache: BaselineCache, max_rounds: int | None = None,
                ) -> tuple[Reply, list[float]] | Fault:
    """(reply, baseline samples) from the worker, or a Fault; a failed capture is a Fault.
    max_rounds bounds the rounds the worker times (None: the budget and the RSE do)."""
    settings = ctx.settings
    cached = cached_baseline(ctx, case, seeds, how, cache)
    if isinstance(cached, Fault):
        return cached
    # A timing for a verdict may stop once it is decided; upstream's figure times its rounds.
    thresholds = cache.thresholds if max_rounds is None else []
    reply = ctx.channel.ask(record, wire.Time(
        ctx.channel.loading(case), input_seeds=tuple(seeds), budget_s=settings.time_budget_s,
        min_rounds=settings.min_rounds, timing=how, with_baseline=cached is None,
        max_rounds=max_rounds, target_rse=settings.target_rse, baseline=settings.baseline,
        thresholds=tuple(thresholds)))
    if isinstance(reply, Fault):
        return reply
    for phase, seconds in (reply.header.get("phases") or {}).items():
        charge(record, phase, float(seconds), "timing_phases")
    if "graph_error" in reply.header:
        ctx.channel.sandbox.stop_child()  # a failed capture may leave the context unusable
        return Fault(faults.RUNTIME_ERROR, reply.header["graph_error"])
    samples = reply.header["samples_s"]
    return reply, cached if cached is not None else samples["baseline"]


def cached_baseline(ctx: StageContext, case: Case, seeds: list[int], how: str,
                    cache: BaselineCache) -> list[float] | Fault | None:
    """Baseline samples from --kb-baseline-cache (timed here when missing); None: no cache."""
    settings = ctx.settings
    folder = settings.baseline_cache
    if folder is None:
        return None
    fields = baseline_fields(ctx, case.problem.path, how, cache.fields_extra)
    now = time.time()
    key = baselines.cache_key(fields)
    # --kb-retime-baseline re-times each baseline once in this run, not once per candidate.
    if not settings.retime_baseline or key in cache.retimed:
        found = baselines.read(folder, fields, settings.baseline_max_age_s, now)
        if found is not None:
            return list(found)
    baseline = ctx.reference.baseline_model()
    sets = [ctx.reference.inputs(seed) for seed in seeds]
    try:
        side = timing.RotatingSide(baseline, sets, how == "graph", ctx.device)
    except Exception as exc:  # noqa: BLE001 - e.g. the reference cannot be captured
        return Fault(faults.RUNTIME_ERROR, f"the baseline: {faults.describe_exception(exc)}")
    measured = timing.measure_interleaved({"baseline": side.turn(timing.poison)}, ctx.device,
                                          settings.time_budget_s, settings.min_rounds,
                                          settings.target_rse)
    samples: list[float] = measured.samples_s["baseline"]
    baselines.write(folder, fields, samples, now)
    cache.retimed.add(key)
    return samples


def baseline_fields(ctx: StageContext, problem: Path, how: str,
                    extra: dict[str, Any]) -> dict[str, Any]:
    """What names a cached baseline: the problem's source, the software, the device, and the
    settings its time depends on."""
    import torch

    settings = ctx.settings
    return {"problem": baselines.source_digest(problem),
            "torch": torch.__version__, "cuda": torch.version.cuda,
            "device": ctx.device.split(":")[0], "baseline": settings.baseline,
            "timing": how, "mode": settings.mode, "seed": settings.seed,
            "dtype": str(torch.get_default_dtype()), "input_sets": TIMING_INPUT_SETS,
            "precision": settings.precision, "tf32": settings.tf32, **extra}
