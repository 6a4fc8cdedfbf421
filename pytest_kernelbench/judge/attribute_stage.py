"""The attribute stage, after a checked timing and under the shared hold: which kernels ran,
the speed of light, the flags, and the verdict (passed, slower, torch_only, inconclusive)."""

from __future__ import annotations

from typing import Any

from pytest_kernelbench import faults
from pytest_kernelbench.gpu import roofline, timing
from pytest_kernelbench.gpu.kernels import custom_kernels
from pytest_kernelbench.isolation import wire
from pytest_kernelbench.isolation.sandbox import Fault
from pytest_kernelbench.judge import fast
from pytest_kernelbench.judge.context import StageContext
from pytest_kernelbench.judge.outcome import Outcome
from pytest_kernelbench.judge.speed_stage import Timed
from pytest_kernelbench.record import Record, add_flag, copy_of
from pytest_kernelbench.settings import Settings
from pytest_kernelbench.suite.discovery import Case

INCONCLUSIVE = "inconclusive"  # a speed item the timing cannot tell from p


def worth_profiling(speedup: float, interval: list[float | None] | None, p: float,
                    require_kernel: bool) -> bool:
    """Whether to profile a candidate whose call neither a CUDA graph nor a CUPTI trace can
    read (a profiler session costs seconds; the others, milliseconds, so every candidate gets
    them).

    Under --kb-require-kernel the answer decides the verdict of any candidate faster than p;
    otherwise it is a flag, worth a profiler session only when the speedup is above p beyond
    timing noise: a candidate at 1.00x lands above 1 half the time.
    """
    if speedup <= p:
        return False
    low = interval[0] if interval else None
    return require_kernel or (low if low is not None else speedup) > p


def attribute_case(ctx: StageContext, case: Case, timed_record: Record, timed: Timed,
                   ceilings: dict[str, roofline.Ceilings]) -> Outcome:
    """Which kernels ran (a CUDA graph of one call, a CUPTI trace, or a profiler session), the
    speed of light, and the verdict. Nothing here is timed, and a profiler session takes
    seconds: holding the device alone for it would make every other worker wait. (ceilings,
    the device's measured ceilings by dtype, is raised by what is seen here.)"""
    record = copy_of(timed_record)
    settings = ctx.settings
    traits = ctx.reference.traits(case, ctx.timing_seeds(),
                                  lambda: ctx.channel.let_timings_in(record))
    ctx.channel.let_timings_in(record)
    note_kernels(ctx, case, record, traits["kernels"],
                 profiler=worth_profiling(timed.ratio, record.get("speedup_interval"),
                                          settings.p, settings.require_kernel))
    candidate_s = record["candidate_time"]
    assert candidate_s is not None
    note_speed_of_light(ctx.device, record, traits, candidate_s, ceilings)
    for note in [*timed.notes, *flags(settings, record, timed.ratio)]:
        add_flag(record, note)
    if not record.get("flags"):
        record["flags"] = []
    return speed_verdict(ctx, record, timed.ratio, timed.candidate_samples_s)


def note_kernels(ctx: StageContext, case: Case, record: Record,
                 baseline_kernels: list[str] | None, profiler: bool) -> None:
    """Which kernels ran (on CUDA only: baseline_kernels is None elsewhere), read from a CUDA
    graph of one call, or where the call cannot be captured, from CUPTI's records of one call.
    Where CUPTI cannot be loaded, a profiler session answers, which costs seconds in a fresh
    process: only when profiler is true."""
    if baseline_kernels is None:
        return
    reply = ctx.channel.ask(record, wire.Profile(ctx.channel.loading(case),
                                                 input_seed=ctx.input_seed(0), profiler=profiler))
    if isinstance(reply, Fault) or reply.header["kernels"] is None:
        return
    names = reply.header["kernels"]
    source = case.candidate.path.read_text(errors="replace") if case.candidate else ""
    own = custom_kernels(names, baseline_kernels, source)
    record.update({"custom_kernels": own, "torch_only": not own, "launched_kernels": len(names),
                   "kernel_attribution": reply.header["attribution"]})


def note_speed_of_light(device: str, record: Record, traits: dict[str, Any], candidate_s: float,
                        ceilings: dict[str, roofline.Ceilings]) -> None:
    dtype = traits["dtype"]
    if dtype not in ceilings:
        ceilings[dtype] = roofline.measure_ceilings(device, dtype)
    cost = traits["cost"]
    baseline_s = record["baseline_time"]
    for seconds in (baseline_s, candidate_s):
        ceilings[dtype] = roofline.raised(ceilings[dtype], cost, seconds or 0.0)
    ceiling = ceilings[dtype]
    record["speed_of_light"] = {
        **cost.as_dict(), "dtype": dtype, "ceilings": ceiling.as_dict(),
        "baseline_fraction": roofline.fraction(cost, baseline_s or 0.0, ceiling),
        "candidate_fraction": roofline.fraction(cost, candidate_s, ceiling),
    }


def flags(settings: Settings, record: Record, ratio: float) -> list[str]:
    found = []
    if ratio > settings.flag_speedup:
        found.append(f"speedup above {settings.flag_speedup:g}x: check it by hand")
    if record.get("torch_only"):
        found.append("torch_only: no kernel of its own ran")
    return found


def speed_verdict(ctx: StageContext, record: Record, ratio: float,
                  candidate_samples: list[float]) -> Outcome:
    """passed, slower, torch_only (under --kb-require-kernel) or inconclusive, for a checked
    timing. It passes where fast.fast_by_rule holds at p, the rule the record's `fast` and
    every table apply; the record's status is the item's verdict, inconclusive where the item
    is skipped as such."""
    p = ctx.settings.p
    if ctx.settings.require_kernel and record.get("torch_only"):
        record["status"] = faults.TORCH_ONLY
        return Outcome(faults.TORCH_ONLY, "no kernel of the candidate's own ran "
                       "(--kb-require-kernel): it only called PyTorch", record=record)
    record["status"] = faults.PASSED
    if record.get("speedup") is None:  # the harness's clock could not settle the time
        if fast.fast_by_rule(record, p):  # p=0: any time at all is a speedup above it
            return Outcome(faults.PASSED, record=record, candidate_samples_s=candidate_samples)
        record["status"] = faults.INCONCLUSIVE
        add_flag(record, f"{INCONCLUSIVE}: the harness's clock could neither confirm nor refute "
                 "the reported time (a busy host)")
        return Outcome(faults.INCONCLUSIVE, "the harness's clock could neither confirm nor "
                       "refute the reported time (a busy host): no speedup", skipped=True,
                       record=record)
    interval = record.get("speedup_interval")
    record["speedup_margin"] = timing.margin(interval, ctx.device)
    times = (f"baseline {(record['baseline_time'] or 0) * 1e6:.1f} us, candidate "
             f"{(record['candidate_time'] or 0) * 1e6:.1f} us")
    if fast.fast_by_rule(record, p):
        return Outcome(faults.PASSED, record=record, candidate_samples_s=candidate_samples)
    record["status"] = faults.INCONCLUSIVE
    if ratio > p:  # above p, but by less than such a timing can tell: no verdict either way
        why = timing.resolution_words(ratio, interval, p, ctx.device)
        add_flag(record, f"{INCONCLUSIVE}: not shown to be above p={p:g}: {why}")
        return Outcome(faults.INCONCLUSIVE, f"{INCONCLUSIVE}: speedup {ratio:.3f} is not shown "
                       f"to be above p={p:g} ({times}); {why}", skipped=True, record=record,
                       candidate_samples_s=candidate_samples)
    message = f"speedup {ratio:.3f} is not above p={p:g} ({times})"
    if timing.below(ratio, interval, p, ctx.device):
        record["status"] = faults.SLOWER  # correct, and shown not faster than p
        return Outcome(faults.SLOWER, message, record=record,
                       candidate_samples_s=candidate_samples)
    # Not shown to be slower: the item neither passes (fast_p does not count it) nor fails,
    # so the exit status does not turn on noise.
    why = timing.resolution_words(ratio, interval, p, ctx.device)
    add_flag(record, f"{INCONCLUSIVE}: not shown to be at or below p={p:g}: {why}")
    return Outcome(faults.INCONCLUSIVE, f"{INCONCLUSIVE}: {message}; {why}", skipped=True,
                   record=record, candidate_samples_s=candidate_samples)
