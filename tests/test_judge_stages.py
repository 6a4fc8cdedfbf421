"""The judge's stage modules through their public seams, with stand-ins (no worker, no GPU)."""

from __future__ import annotations

import time
from types import SimpleNamespace

import jsonschema
import pytest

from pytest_kernelbench import faults, record
from pytest_kernelbench.judge import attribute_stage, clock, speed_stage
from pytest_kernelbench.judge.channel import SHORTEST_WAIT_S, Deadline
from pytest_kernelbench.judge.outcome import Outcome, cheat, skipped_after, stream_hint
from pytest_kernelbench.judge.reference import burst_calls

STREAMS = ["creates CUDA streams (torch.cuda.Stream)"]


def fresh() -> record.Record:
    return record.new_record(1, 2, "ReLU", "good", "s0", "good/level1/2_ReLU.py")


def test_a_new_record_holds_every_field_the_schema_requires():
    required = record.schema()["$defs"]["record"].get("required", [])
    made = fresh()
    assert set(required) <= set(made)
    jsonschema.validate(made, {"$defs": record.schema()["$defs"], "$ref": "#/$defs/record"})


def test_flags_charges_and_holds_accumulate_through_the_record_writers():
    made = fresh()
    record.add_flag(made, "first")
    record.add_flag(made, "second")
    record.charge(made, "run", 0.25)
    record.charge(made, "run", 0.5)
    record.charge(made, "rounds", 1.0, "timing_phases")
    record.mark_held(made, "compile", [1.0, 2.0])
    record.mark_held(made, "correct", [2.0, 3.0])
    assert made["flags"] == ["first", "second"] and record.has_flag(made, "second")
    assert made["harness_s"] == {"run": 0.75} and made["timing_phases"] == {"rounds": 1.0}
    assert made["held"] == {"compile": [1.0, 2.0], "correct": [2.0, 3.0]}
    record.replace_flags(made, ["first"], "third")
    assert made["flags"] == ["second", "third"]


def test_a_deadline_gives_an_inner_stage_its_own_time_and_the_outer_one_its_time_back():
    deadline = Deadline()
    with deadline.running(10.0):
        outer_at = deadline.at
        with deadline.running(0.0):
            assert deadline.left_s() == SHORTEST_WAIT_S  # never nothing: a request still asks
            time.sleep(0.01)
        assert deadline.at > outer_at  # the inner stage's time is given back
    assert deadline.at == float("inf")


def test_a_cheat_says_why_a_candidate_with_streams_most_likely_cheated():
    made = {**fresh(), "static_scan": STREAMS, "speedup": 3.0}
    outcome = cheat(made, "timed output wrong")
    assert outcome.status == faults.CHEAT and made["speedup"] is None
    assert outcome.message.startswith("timed output wrong") and stream_hint(made) in outcome.message


def test_a_stage_after_a_failed_one_is_skipped_with_its_status():
    failed = Outcome(faults.MISMATCH, "trial 0 differs", record=fresh())
    skipped = skipped_after(failed, "correct")
    assert skipped.skipped and skipped.status == faults.MISMATCH
    assert skipped.message == "correct failed (mismatch)" and skipped.record is not failed.record


@pytest.mark.parametrize("median_s", [1e-9, 1e-4, 10.0])
def test_a_burst_lasts_about_its_target_within_its_bounds(median_s):
    calls = burst_calls(median_s)
    assert 3 <= calls <= 2_000


def settings(**fields):
    base = {"p": 1.0, "require_kernel": False, "flag_speedup": 10.0, "timing": "auto"}
    return SimpleNamespace(**{**base, **fields})


def context(device="cpu", keeps_state=False, **fields):
    reference = SimpleNamespace(lockstep=object() if keeps_state else None)
    return SimpleNamespace(settings=settings(**fields), device=device, reference=reference)


@pytest.mark.parametrize("device, keeps_state, wanted, wall_s, mode, noted", [
    ("cpu", False, "graph", 1e-6, "events", True),
    ("cpu", False, "auto", 1e-6, "events", False),
    ("cuda:0", False, "auto", 1e-6, "graph", False),
    ("cuda:0", False, "auto", 1e-3, "events", False),
    ("cuda:0", True, "graph", 1e-6, "events", True),
])
def test_the_timing_mode_follows_the_device_the_reference_and_the_baselines_pace(
        device, keeps_state, wanted, wall_s, mode, noted):
    notes: list[str] = []
    ctx = context(device, keeps_state, timing=wanted)
    assert speed_stage.timing_mode(ctx, wall_s, notes) == mode
    assert bool(notes) == noted


def timed_record(speedup):
    made = fresh()
    made.update({"speedup": speedup, "baseline_time": 1e-3, "candidate_time": 1e-3 / speedup,
                 "speedup_interval": [speedup * 0.99, speedup * 1.01], "flags": []})
    return made


def test_a_clear_speedup_above_p_passes_and_one_below_is_slower():
    faster = attribute_stage.speed_verdict(context(), timed_record(2.0), 2.0, [1.0])
    slower = attribute_stage.speed_verdict(context(), timed_record(0.5), 0.5, [1.0])
    assert faster.passed and faster.candidate_samples_s == [1.0]
    assert slower.status == faults.SLOWER and not slower.skipped
    assert slower.record["status"] == faults.SLOWER


def test_a_record_the_harness_clock_left_without_a_speedup_is_inconclusive():
    made = timed_record(2.0)
    made["speedup"] = None
    outcome = attribute_stage.speed_verdict(context(), made, 2.0, [])
    assert outcome.status == faults.INCONCLUSIVE and outcome.skipped


def test_under_require_kernel_a_candidate_of_torch_calls_alone_is_torch_only():
    made = {**timed_record(2.0), "torch_only": True}
    outcome = attribute_stage.speed_verdict(context(require_kernel=True), made, 2.0, [])
    assert outcome.status == faults.TORCH_ONLY
    assert attribute_stage.flags(settings(), made, 20.0) == [
        "speedup above 10x: check it by hand", "torch_only: no kernel of its own ran"]


class Worker:
    """A worker whose bursts take seconds_per_call[side] per call."""

    def __init__(self, seconds_per_call):
        self.seconds_per_call = seconds_per_call
        self.sides: list[str] = []

    def ask(self, record, op, case, calls=1, input_seeds=(), side="candidate", **extra):
        self.sides.append(side)
        return SimpleNamespace(wall_s=self.seconds_per_call[side] * calls, header={})


def bursts_of(worker, device="cuda:0"):
    ctx = SimpleNamespace(channel=worker, device=device)
    return clock.Bursts(ctx, case=None, record=fresh(), seeds=[1, 2, 3])


def test_a_reported_time_the_harness_clock_confirms_stands():
    worker = Worker({"candidate": 1e-4})
    clocked = clock.check_clock(bursts_of(worker), 1e-4, "events", 2e-4, [])
    assert clocked == (pytest.approx(1e-4), None, False) and worker.sides == ["candidate"]


def test_a_reported_time_every_burst_contradicts_is_a_cheat():
    worker = Worker({"candidate": 1e-2, "baseline": 2e-4})
    bursts = bursts_of(worker)
    clocked = clock.check_clock(bursts, 1e-4, "events", 2e-4, [])
    assert isinstance(clocked, Outcome) and clocked.status == faults.CHEAT
    assert worker.sides[:clock.BURST_TRIES] == ["candidate"] * clock.BURST_TRIES
    assert bursts.record["candidate_wall_time"] == pytest.approx(1e-2)
