"""judge/attribute_stage.py: the speed verdict and the flags of a checked timing, read from
stand-in contexts (no worker, no GPU)."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from pytest_kernelbench import faults, record
from pytest_kernelbench.judge import attribute_stage, fast
from pytest_kernelbench.judge.outcome import settled
from pytest_kernelbench.reporting import scoring


def fresh() -> record.Record:
    return record.new_record(1, 2, "ReLU", "good", "s0", "good/level1/2_ReLU.py")


def settings(**fields):
    base = {"p": 1.0, "require_kernel": False, "flag_speedup": 10.0, "timing": "auto"}
    return SimpleNamespace(**{**base, **fields})


def context(device="cpu", **fields):
    return SimpleNamespace(settings=settings(**fields), device=device,
                           reference=SimpleNamespace(lockstep=None))


def timed_record(speedup):
    made = fresh()  # as the correct stage leaves it
    made.update({"compiled": True, "correct": True, "status": faults.PASSED,
                 "speedup": speedup, "baseline_time": 1e-3, "candidate_time": 1e-3 / speedup,
                 "speedup_interval": [speedup * 0.99, speedup * 1.01], "flags": []})
    return made


def test_a_clear_speedup_above_p_passes_and_one_below_is_slower():
    faster = attribute_stage.speed_verdict(context(), timed_record(2.0), 2.0, [1.0])
    slower = attribute_stage.speed_verdict(context(), timed_record(0.5), 0.5, [1.0])
    assert faster.passed and faster.candidate_samples_s == [1.0]
    assert slower.status == faults.SLOWER and not slower.skipped
    assert slower.record["status"] == faults.SLOWER


def test_a_speedup_below_p_within_the_timings_noise_is_skipped_and_reads_inconclusive():
    made = timed_record(0.999)
    made["speedup_interval"] = [0.9, 1.1]
    outcome = attribute_stage.speed_verdict(context(), made, 0.999, [])
    assert outcome.skipped and outcome.message.startswith(attribute_stage.INCONCLUSIVE)
    # The record says what the skipped item says, not `slower`.
    assert outcome.status == made["status"] == faults.INCONCLUSIVE
    assert any(flag.startswith(attribute_stage.INCONCLUSIVE) for flag in made["flags"])
    judged = settled(outcome, "speed", [0.0, 1.0]).record
    assert judged["verdicts"] == {"speed": faults.INCONCLUSIVE}
    assert judged["fast"] == {"0": True, "1": False}


@pytest.mark.parametrize(("speedup", "interval", "device", "status"), [
    (1.15, [0.0, math.inf], "cpu", faults.INCONCLUSIVE),  # no interval: within 20%
    (1.25, [0.0, math.inf], "cuda", faults.PASSED),  # no interval, beyond it
    (1.01, [1.005, 1.015], "cpu", faults.PASSED),  # an interval that clears p
    (1.01, [0.990, 1.030], "cuda", faults.INCONCLUSIVE),  # an interval that holds p
    (1.20, None, "cpu", faults.INCONCLUSIVE),  # the harness's clock set it: within 50%
])
def test_a_speedup_above_p_passes_only_where_its_timing_can_tell(speedup, interval, device,
                                                                 status):
    made = timed_record(speedup)
    made.update({"speedup_interval": interval, "correct": True})
    outcome = attribute_stage.speed_verdict(context(device), made, speedup, [])
    assert outcome.status == made["status"] == status if status != faults.PASSED \
        else outcome.passed
    assert outcome.skipped is (status == faults.INCONCLUSIVE)
    assert fast.is_fast(made, 1.0) is (status == faults.PASSED)  # fast_p agrees
    assert fast.is_fast(made, 0.0)  # it is still correct and timed: fast_0 counts it
    judged = settled(outcome, "speed", [0.0, 1.0]).record
    assert judged["fast"] == {"0": True, "1": status == faults.PASSED}
    assert judged["verdicts"]["speed"] == status


def test_a_record_the_harness_clock_left_without_a_speedup_is_inconclusive_above_p_0():
    made = {**timed_record(2.0), "speedup": None, "speedup_interval": None}
    outcome = attribute_stage.speed_verdict(context(), made, 2.0, [])
    assert outcome.status == made["status"] == faults.INCONCLUSIVE and outcome.skipped
    assert any(flag.startswith(attribute_stage.INCONCLUSIVE) and "(a busy host)" in flag
               for flag in made["flags"])
    judged = settled(outcome, "speed", [0.0, 1.0]).record
    assert judged["fast"] == {"0": True, "1": False}


def test_at_p_0_a_time_the_harness_clock_could_not_settle_still_passes():
    # Any time at all is a speedup above 0, so a busy host cannot cost a correct candidate
    # its fast_0, which KernelBench defines as its correctness.
    made = {**timed_record(2.0), "speedup": None, "speedup_interval": None}
    outcome = attribute_stage.speed_verdict(context(p=0.0), made, 2.0, [])
    assert outcome.passed and made["status"] == faults.PASSED
    assert not any(flag.startswith(attribute_stage.INCONCLUSIVE) for flag in made["flags"])
    judged = settled(outcome, "speed", [0.0, 1.0]).record
    assert judged["fast"] == {"0": True, "1": False}
    untimed = {**made, "candidate_time": None, "baseline_time": None}  # speed item not run
    assert not fast.fast_by_rule(untimed, 0.0)


def test_under_require_kernel_a_candidate_of_torch_calls_alone_is_torch_only_and_never_fast():
    made = {**timed_record(2.0), "torch_only": True}
    outcome = attribute_stage.speed_verdict(context(require_kernel=True), made, 2.0, [])
    assert outcome.status == made["status"] == faults.TORCH_ONLY and not outcome.skipped
    judged = settled(outcome, "speed", [0.0, 1.0, 1.5]).record
    assert judged["verdicts"] == {"speed": faults.TORCH_ONLY}
    assert judged["fast"] == {"0": False, "1": False, "1.5": False}
    # fast_p reads the same, and so would a reader applying the rule to the stored fields.
    assert scoring.fast_p([judged], 1.0) == scoring.fast_p([made], 1.0) == 0.0
    assert not fast.fast_by_rule(made, 1.0)
    assert attribute_stage.flags(settings(), made, 20.0) == [
        "speedup above 10x: check it by hand", "torch_only: no kernel of its own ran"]


@pytest.mark.parametrize("speedup, interval, require_kernel, worth", [
    (0.9, [0.8, 1.0], True, False),  # not faster than p: nothing to decide
    (1.5, [1.2, 1.8], False, True),  # above p beyond noise: the flag is worth a session
    (1.01, [0.95, 1.07], False, False),  # within noise of p
    (1.01, [0.95, 1.07], True, True),  # the kernel decides the verdict
    (1.5, None, False, True),
])
def test_a_profiler_session_is_spent_only_where_its_answer_matters(speedup, interval,
                                                                   require_kernel, worth):
    assert attribute_stage.worth_profiling(speedup, interval, 1.0, require_kernel) is worth


def test_on_a_cpu_no_kernels_are_read_and_the_record_is_left_alone():
    made = timed_record(2.0)
    before = dict(made)
    attribute_stage.note_kernels(context(), None, made, None, profiler=True)
    assert made == before
