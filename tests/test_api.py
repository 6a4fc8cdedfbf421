"""The Python API: the same evaluation core as the pytest items, without pytest."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import jsonschema
import pytest

from pytest_kernelbench import Session, evaluate, record
from pytest_kernelbench.gpu import devices
from pytest_kernelbench.isolation import wire

EXAMPLES = Path(__file__).parent / "examples"
RELU = EXAMPLES / "problems" / "level1" / "2_ReLU.py"
GOOD = EXAMPLES / "candidates" / "good" / "level1" / "2_ReLU.py"
WRONG = EXAMPLES / "candidates" / "broken" / "level1" / "2_ReLU" / "wrong_values.py"
FAST = {"device": "cpu", "trials": 2, "time_budget_s": 0.05, "p": 0.0}


def valid(one: dict) -> dict:
    jsonschema.validate(one, {"$defs": record.schema()["$defs"], "$ref": "#/$defs/record"})
    return one


def test_evaluate_judges_files_as_the_plugin_does(timed):
    result = valid(evaluate(RELU, GOOD, **FAST))
    assert (result["level"], result["problem_id"], result["problem"]) == (1, 2, "ReLU")
    assert result["compiled"] and result["correct"] and result["status"] == "passed"
    timed(result)
    assert result["upstream"]["correct"] is True
    # where the correctness stage's seconds went (no stream-order trials on a CPU)
    assert set(result["correct_phases"]) == {"reference", "trials", "check"}
    phases = result["timing_phases"]  # where the timing's seconds went
    assert set(phases) == {"facts", "setup", "warmup", "rounds", "outputs", "check_outputs",
                           "check_clock"}
    assert all(seconds >= 0 for seconds in phases.values()) and phases["rounds"] > 0


def test_sources_are_accepted_and_a_wrong_candidate_says_where():
    result = valid(evaluate(RELU.read_text(), WRONG.read_text(), **FAST))
    assert result["level"] == 0 and result["status"] == "mismatch"
    assert "trial 0" in result["error"] and "differ" in result["error"]


def test_a_session_judges_each_attempt_as_it_was_when_called(tmp_path):
    attempt = tmp_path / "attempt.py"
    with Session(**FAST) as session:
        attempt.write_text(WRONG.read_text())
        first = session.evaluate(RELU, attempt)
        attempt.write_text(GOOD.read_text())
        second = session.evaluate(RELU, attempt)
    # The second attempt is correct; its speed verdict on a busy CPU may be inconclusive.
    assert first["status"] == "mismatch" and not first["correct"]
    assert second["correct"] and second["status"] in ("passed", "inconclusive")
    assert first["sample"] != second["sample"]


def test_a_verdicts_timing_may_stop_once_clear_of_the_thresholds_the_summary_reads(monkeypatch):
    with Session(**{**FAST, "p": 2.0, "flag_speedup": 50.0}) as session:
        asked = session.evaluator.sandbox.request
        sent: list = []

        def request(request, timeout_s):
            if isinstance(request, wire.Time):
                sent.append(request.thresholds)
            return asked(request, timeout_s)

        monkeypatch.setattr(session.evaluator.sandbox, "request", request)
        valid(session.evaluate(RELU, GOOD))
    assert sent == [(0.0, 1.0, 2.0, 50.0)]


CACHES = EXAMPLES / "candidates" / "hostile" / "level1" / "2_ReLU" / "caches_by_shape.py"
# The same cache in a candidate that makes a CUDA stream (its static scan says so).
CACHES_WITH_A_STREAM = CACHES.read_text() + "\n\nSIDE = torch.cuda.Stream if False else None\n"


@pytest.mark.parametrize("source, ordered, status", [
    (CACHES_WITH_A_STREAM, False, "race"),  # an unordered stream read an earlier trial's memory
    (CACHES_WITH_A_STREAM, True, "cheat"),  # ordered streams: the stale answer is a cache
    (CACHES.read_text(), False, "cheat"),  # no stream of its own: a cache, no order trial asked
], ids=["streams-unordered", "streams-ordered", "no-streams"])
def test_a_stale_answer_from_a_candidate_that_makes_streams_is_told_by_its_order_trials(
        tmp_path, monkeypatch, source, ordered, status):
    from pytest_kernelbench import faults
    from pytest_kernelbench.judge import channel, correct_stage

    asked: list[bool] = []

    def unordered(trials):
        asked.append(True)
        return None if ordered else (faults.RACE, "with the caller's stream writing the inputs "
                                     "late, forward read them before they were written", "")

    # The order trials need CUDA streams; here only their answer is stood in for, and the
    # worker on the CPU is not asked to track streams.
    loading = channel.WorkerChannel.loading
    monkeypatch.setattr(channel.WorkerChannel, "order_trials", property(lambda self: True))
    monkeypatch.setattr(channel.WorkerChannel, "loading", lambda self, case: dataclasses.replace(
        loading(self, case), order_trials=False))
    monkeypatch.setattr(correct_stage.Trials, "unordered", unordered)
    candidate = tmp_path / "2_ReLU.py"
    candidate.write_text(source)
    result = valid(evaluate(RELU, candidate, **{**FAST, "trials": 3}))
    assert result["status"] == status, result["error"]
    assert asked == ([True] if "cuda.Stream" in source else [])
    if status == "race":
        assert "returned the answer for the inputs of trial 0" in result["error"]
        assert "not a cache" in result["error"] and "read them before" in result["error"]
    else:
        assert "answer for the inputs of trial 0" in result["error"]


def test_bad_arguments_are_named():
    with pytest.raises(TypeError, match="unknown option.*trails"):
        Session(device="cpu", trails=3)
    with pytest.raises(ValueError, match="unknown device"):
        Session(device="tpu")
    with pytest.raises(FileNotFoundError, match="no such file: nowhere.py"):
        evaluate(RELU, "nowhere.py", **FAST)


STATEFUL = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    """Keeps its hidden state from call to call, as upstream v0's VanillaRNN does."""

    def __init__(self):
        super().__init__()
        self.cell = nn.Linear(8, 8)
        self.hidden = torch.zeros(4, 8)

    def forward(self, x):
        self.hidden = torch.tanh(self.cell(x + self.hidden.to(x.device)))
        return self.hidden


def get_inputs():
    return [torch.randn(4, 8)]


def get_init_inputs():
    return []
'''

DROPOUT = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(x) * 2


def get_inputs():
    return [torch.randn(64, 64)]


def get_init_inputs():
    return []
'''


def test_a_faithful_copy_of_a_reference_that_keeps_state_is_judged_in_lockstep(correct_and_timed):
    # A faithful copy keeps the same state, so its timed calls drift from the answers of a
    # reference called once per draw: it is judged against one called as it was.
    faithful = STATEFUL.replace("class Model(", "class ModelNew(")
    result = valid(evaluate(STATEFUL, faithful, **FAST))
    correct_and_timed(result)
    assert any(flag.startswith("lockstep:") for flag in result["flags"])


OVERFLOWS_FP16 = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.rand(16, 16) * 1e5]  # beyond fp16's 65504


def get_init_inputs():
    return []
'''


def test_a_reference_whose_output_overflows_at_the_chosen_precision_is_the_problem_s_fault():
    # Cast to fp16 its answer holds Inf, and a constant Inf passes against it.
    cheat = OVERFLOWS_FP16.replace("class Model(", "class ModelNew(").replace(
        "return torch.relu(x)", "return torch.full_like(x, float('inf'))")
    result = valid(evaluate(OVERFLOWS_FP16, cheat, **FAST, precision="fp16"))
    assert result["status"] == "problem_error"
    assert "NaN/Inf" in result["error"] and "fp16" in result["error"]
    assert valid(evaluate(OVERFLOWS_FP16, cheat, **FAST))["status"] == "nan_inf"  # at fp32


def test_a_reference_drawing_random_numbers_in_forward_is_not_called_stateful(correct_and_timed):
    # The second call repeats the draw's random state, so train-mode dropout answers alike;
    # timed calls are not seeded, so their outputs have no one right answer to be held to.
    copy = DROPOUT.replace("class Model(", "class ModelNew(")
    result = valid(evaluate(DROPOUT, copy, **FAST, mode="train"))
    correct_and_timed(result)
    assert any("timed outputs not checked" in flag for flag in result["flags"])


NOISY = STATEFUL.replace(
    "self.hidden = torch.tanh(self.cell(x + self.hidden.to(x.device)))\n        return self.hidden",
    "self.hidden = self.hidden + 1e-9  # answers differ by rounding-sized amounts only\n"
    "        return (x - x) + self.hidden.to(x.device)")


def test_a_reference_whose_calls_differ_only_at_rounding_size_is_judged():
    # Only elementwise differences make a reference stateful: a GPU reference whose answer is
    # rounding noise can differ between calls by the whole-tensor rule alone.
    assert "1e-9" in NOISY
    result = valid(evaluate(NOISY, NOISY.replace("class Model(", "class ModelNew("), **FAST))
    assert result["status"] != "problem_error", result["error"]


# Out of memory whenever the device lock is held shared, as a candidate can be when other
# workers' stages hold the memory beside it; with the device to itself it has enough.
SHORT_OF_MEMORY_BESIDE_OTHERS = '''
import os

import torch
import torch.nn as nn

LOCK = {lock!r}


def shared_hold():
    inode = str(os.stat(LOCK).st_ino)
    for line in open("/proc/locks"):
        fields = line.split()
        if "->" not in fields and fields[1] == "FLOCK" and fields[3] == "READ" \\
                and fields[5].split(":")[-1] == inode:
            return True
    return False


class ModelNew(nn.Module):
    def forward(self, x):
        if shared_hold():
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return torch.relu(x)
'''


def test_a_stage_short_of_memory_beside_other_work_is_judged_again_alone(correct_and_timed):
    source = SHORT_OF_MEMORY_BESIDE_OTHERS.format(lock=str(devices.lock_path("cpu")))
    result = valid(evaluate(RELU, source, **FAST))
    correct_and_timed(result)
    assert any("ran out of device memory while sharing" in flag and "2.00 GiB" in flag
               for flag in result["flags"])
    # Both holds are in the record: the shared one that failed, the exclusive one after it.
    assert {"correct", "correct_beside_others"} <= set(result["held"])
    # and what the stage had when it ran again, alone
    assert result["memory"]["others_gave_back_first"] is True
    assert 0 < result["memory"]["free_at_start_bytes"] <= result["memory"]["total_bytes"]


ALWAYS_SHORT_OF_MEMORY = '''
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        raise RuntimeError("CUDA out of memory. Tried to allocate 4.00 TiB")
'''


def test_an_out_of_memory_verdict_says_what_memory_the_case_had():
    result = valid(evaluate(RELU, ALWAYS_SHORT_OF_MEMORY, **FAST))
    assert result["status"] == "out_of_memory"
    memory = result["memory"]
    # judged again after every other process of the run gave its memory back
    assert memory["others_gave_back_first"] is True and memory["others_silent"] == 0
    assert memory["others_workers_stopped"] is True  # what their candidates held, too
    assert 0 < memory["free_at_start_bytes"] <= memory["total_bytes"]
    assert memory["waited_s"] >= 0

# A problem whose reference runs out of memory while the device is shared, as one can when
# other workers' stages hold the memory beside it; with the device to itself it has enough.
PROBLEM_SHORT_OF_MEMORY_BESIDE_OTHERS = SHORT_OF_MEMORY_BESIDE_OTHERS.replace(
    "class ModelNew(", "class Model(") + '''

def get_inputs():
    return [torch.randn(32, 48)]


def get_init_inputs():
    return []
'''


def test_giving_memory_back_to_a_neighbours_claim_keeps_the_candidate_loaded():
    # Started afresh, a candidate would meet its next stage cold (a torch.compile'd model
    # captured anew): its verdict must not turn on a neighbour running out of memory.
    with Session(**FAST) as session:
        valid(session.evaluate(RELU, GOOD))
        worker = session.evaluator.sandbox.child_pid
        assert worker is not None
        session.evaluator._give_memory_back(workers=False)
        assert session.evaluator.sandbox.child_pid == worker


def test_a_worker_stopped_for_a_neighbours_last_claim_is_said_in_its_cases_next_stage():
    # Only the last run before an out_of_memory verdict has the others stop their workers: the
    # stage of theirs that follows starts its candidate afresh, and says so.
    with Session(**FAST) as session:
        evaluator = session.evaluator
        case, _ = session._prepare(RELU, GOOD)
        evaluator.compile(case)
        assert evaluator.sandbox.child_pid is not None
        evaluator._give_memory_back(workers=True)
        assert evaluator.sandbox.child_pid is None
        outcome = evaluator.correct(case)
    assert outcome.passed
    assert any("its worker was stopped between stages for another case" in flag
               for flag in outcome.record["flags"])


# Like a torch.compile'd model that captures CUDA graphs at its first calls: what a call
# returns depends on what the process ran before it. This one fails when its first call in a
# process is timed (the worker's timing loop is on its stack).
COLD_WHEN_FIRST_TIMED = '''
import sys

import torch
import torch.nn as nn

_calls = 0


def _in_timing():
    frame = sys._getframe()
    while frame is not None:
        if frame.f_code.co_name == "measure_interleaved":
            return True
        frame = frame.f_back
    return False


class ModelNew(nn.Module):
    def forward(self, x):
        global _calls
        _calls += 1
        if _calls == 1 and _in_timing():
            raise RuntimeError("its first call in this process was timed")
        return torch.relu(x)
'''


def test_a_worker_stopped_for_a_neighbours_claim_meets_its_timing_as_its_trials_left_it(
        tmp_path, correct_and_timed):
    # A neighbour that ran out of memory has every worker stopped; the timing that follows in
    # a fresh worker must meet the candidate as the correctness trials left it, not cold: its
    # verdict must not depend on the neighbour.
    candidate = tmp_path / "cold.py"
    candidate.write_text(COLD_WHEN_FIRST_TIMED)
    with Session(**FAST) as session:
        evaluator = session.evaluator
        case, _ = session._prepare(RELU, candidate)
        assert evaluator.correct(case).passed
        evaluator._give_memory_back(workers=True)
        assert evaluator.sandbox.child_pid is None
        outcome = evaluator.speed(case)
    correct_and_timed(outcome.record)  # met cold, it read runtime_error
    assert any("ran its correctness trials again before this stage" in flag
               for flag in outcome.record["flags"])


def test_a_timing_that_falls_back_from_a_failed_graph_capture_meets_the_candidate_warm(
        tmp_path, monkeypatch, correct_and_timed):
    # A failed capture stops the worker (its context may be unusable); the events timing that
    # follows, in a fresh one, must meet the candidate as the correctness trials left it. On a
    # CPU a capture always fails, so the graph mode is asked for outright.
    from pytest_kernelbench.judge import speed_stage

    monkeypatch.setattr(speed_stage, "timing_mode", lambda ctx, wall_s, notes: "graph")
    candidate = tmp_path / "cold.py"
    candidate.write_text(COLD_WHEN_FIRST_TIMED)
    result = valid(evaluate(RELU, candidate, **FAST))
    correct_and_timed(result)  # met cold, it read runtime_error
    assert result["timing"] == "events"
    assert any("CUDA graph capture failed" in flag for flag in result["flags"])
    assert any("ran its correctness trials again" in flag for flag in result["flags"])


MUTATES_INPUT = EXAMPLES / "candidates" / "hostile" / "level1" / "2_ReLU" / "mutates_input.py"


@pytest.mark.parametrize("upstream_timing", [False, True])
def test_a_candidate_only_upstreams_rules_pass_is_timed_for_them_as_in_a_pytest_run(
        upstream_timing):
    result = valid(evaluate(RELU, MUTATES_INPUT, upstream_timing=upstream_timing, **FAST))
    assert result["status"] == "mutated_input" and result["upstream"]["correct"] is True
    if upstream_timing:
        assert result["upstream"]["speedup"] > 0
        assert result["verdicts"]["speed"] == "skipped"
    else:  # the device is not held alone for a figure no verdict of ours reads
        assert result["upstream"]["speedup"] is None
        assert "time" not in result["harness_s"]


def test_a_problem_short_of_memory_beside_other_work_is_judged_again_alone(tmp_path, correct_and_timed):
    problem = tmp_path / "level1" / "2_ReLU.py"
    problem.parent.mkdir()
    lock = str(devices.lock_path("cpu"))
    problem.write_text(PROBLEM_SHORT_OF_MEMORY_BESIDE_OTHERS.format(lock=lock))
    result = valid(evaluate(problem, GOOD, **FAST))
    correct_and_timed(result)
    assert any("the problem's own side ran out of memory" in flag for flag in result["flags"])


def test_a_problem_short_of_memory_alone_is_the_problems_error(tmp_path):
    problem = tmp_path / "level1" / "2_ReLU.py"
    problem.parent.mkdir()
    problem.write_text(ALWAYS_SHORT_OF_MEMORY.replace("class ModelNew(", "class Model(")
                       + "\nimport torch\n\n\ndef get_inputs():\n    return [torch.randn(4)]\n"
                       "\n\ndef get_init_inputs():\n    return []\n")
    result = valid(evaluate(problem, GOOD, **FAST))
    assert result["status"] == "problem_error"
    assert "out of memory" in result["error"]



def _short_of_memory_at_first(monkeypatch, times: int) -> list[int]:
    """The harness's comparing of an output runs out of device memory its first `times` calls
    (beside others, it can); the calls made are counted."""
    from pytest_kernelbench.judge.answers import AnswerChecks

    judge, calls = AnswerChecks.judge, []

    def short(self, *args, **kwargs):
        calls.append(1)
        if len(calls) <= times:
            import torch
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 212.00 MiB")
        return judge(self, *args, **kwargs)

    monkeypatch.setattr(AnswerChecks, "judge", short)
    return calls


def test_the_harness_short_of_memory_beside_other_work_judges_the_stage_again_alone(
        monkeypatch, correct_and_timed):
    _short_of_memory_at_first(monkeypatch, 1)
    result = valid(evaluate(RELU, GOOD, **FAST))
    correct_and_timed(result)
    assert any("the harness's own side ran out of memory" in flag
               and "every other worker of the run stopped" in flag for flag in result["flags"])


def test_the_harness_short_of_memory_alone_is_no_verdict_on_the_candidate(monkeypatch):
    calls = _short_of_memory_at_first(monkeypatch, 2)
    with pytest.raises(Exception, match="out of memory"):
        evaluate(RELU, GOOD, **FAST)  # the harness's failure: no out_of_memory verdict
    assert len(calls) == 2  # once beside others, once alone


LINEAR = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.linear = nn.Linear(features, features)

    def forward(self, x):
        return torch.relu(self.linear(x))


def get_inputs():
    return [torch.randn(8, 64)]


def get_init_inputs():
    return [64]
'''

LINEAR_CANDIDATE = '''
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.linear = nn.Linear(features, features)

    def forward(self, x):
        return torch.clamp_min(torch.addmm(self.linear.bias, x, self.linear.weight.t()), 0)
'''


def test_a_large_reference_is_let_go_while_the_worker_times_and_built_again_alike(
        tmp_path, monkeypatch, correct_and_timed):
    # "Large" is over KEPT_OUTPUTS_BYTES of weights: lowered here so that a 64x64 Linear is.
    from pytest_kernelbench.judge import reference
    from pytest_kernelbench.suite import loading

    problem = tmp_path / "level1" / "1_Linear.py"
    problem.parent.mkdir()
    problem.write_text(LINEAR)
    built = []
    build_model = loading.build_model
    monkeypatch.setattr(loading, "build_model", lambda *a: built.append(a[0]) or build_model(*a))
    with Session(**FAST) as session:
        ev = session.evaluator
        held_while_timing = []
        asked = ev.sandbox.request

        def request(request, timeout_s):
            if isinstance(request, wire.Time):
                held_while_timing.append(ev.reference.holds_model)
            return asked(request, timeout_s)

        monkeypatch.setattr(ev.sandbox, "request", request)
        kept = valid(session.evaluate(problem, LINEAR_CANDIDATE))
        monkeypatch.setattr(reference, "KEPT_OUTPUTS_BYTES", 1000)  # outputs are let go too
        results = [valid(session.evaluate(problem, source))
                   for source in (LINEAR_CANDIDATE, LINEAR_CANDIDATE, WRONG_LINEAR)]
    assert held_while_timing == [True, False, False]
    assert len(built) > 2  # built again after it was set aside, each time with its seed
    # The weights built again are the reference's: the faithful candidate passes each time.
    for faithful in (kept, *results[:2]):
        correct_and_timed(faithful)
    assert results[2]["status"] == "mismatch" and "trial 0" in results[2]["error"]


WRONG_LINEAR = LINEAR_CANDIDATE.replace("torch.clamp_min(", "0.5 * torch.clamp_min(")


def _bursts_altered(monkeypatch, evaluator, alter) -> list[str]:
    """Pass each burst the evaluator's worker answers through alter(side, reply, sides so
    far); returns those sides ('candidate' or 'baseline'), in order, as they come."""
    asked = evaluator.channel.ask
    sides: list[str] = []

    def ask(record, request):
        reply = asked(record, request)
        if not isinstance(request, wire.Burst):
            return reply
        sides.append(request.side)
        return alter(sides[-1], reply, sides)

    monkeypatch.setattr(evaluator.channel, "ask", ask)
    return sides


def test_a_host_whose_load_fell_after_the_candidates_bursts_is_no_cheat(monkeypatch, correct_and_timed):
    # The candidate's first bursts ran while the host was loaded (both clocks, the worker's
    # and the harness's, saw them ten times slower), the baseline's burst after them on a
    # quiet host: a burst of the candidate's right after the baseline's tells the two apart.
    from pytest_kernelbench.judge import clock

    def loaded(side, reply, sides):
        if sides.count("candidate") > clock.BURST_TRIES or side != "candidate":
            return reply
        header = {**reply.header, "timed_s": (reply.header.get("timed_s") or 0) * 10}
        return dataclasses.replace(reply, header=header, wall_s=reply.wall_s * 10)

    with Session(**FAST) as session:
        bursts = _bursts_altered(monkeypatch, session.evaluator, loaded)
        result = valid(session.evaluate(RELU, GOOD))
    correct_and_timed(result)
    assert bursts[:clock.BURST_TRIES + 2] == \
        ["candidate"] * clock.BURST_TRIES + ["baseline", "candidate"]


def _slowed_there(monkeypatch, evaluator, timed: tuple[str, ...] = (), bursts: int = 99,
                  pace: float = 1.0, baseline_as_here: bool = False,
                  candidate_after_pace: float = 1.0, by: float = 10.0) -> list[str]:
    """`by` (ten) times as long in the candidate's process: the timing's samples of the sides in
    timed and the first `bursts` bursts of the baseline; `pace` times as long, the harness's
    own work there, and, once that was read, `candidate_after_pace` times as long, the
    candidate's bursts. Returns those requests as they come ('time', 'burst' of the baseline,
    'pace', 'own' for the candidate's bursts after a pace), each marked '*' where it was
    altered. baseline_as_here: the timing's samples of the baseline are this process's figure
    for it (which a busy host can otherwise put 2.5x apart)."""
    from pytest_kernelbench.isolation.sandbox import Fault
    from pytest_kernelbench.judge import reference

    asked = evaluator.channel.ask
    seen: list[str] = []
    here: list[float] = []
    wall_s = reference.ReferenceSide.wall_s

    def noted(self, *args, **kwargs):
        here.append(wall_s(self, *args, **kwargs))
        return here[-1]

    monkeypatch.setattr(reference.ReferenceSide, "wall_s", noted)

    def ask(record, request):
        reply = asked(record, request)
        op = request.op
        if op == "burst" and request.side != "baseline":
            if not any(o.startswith("pace") for o in seen):
                return reply
            op = "own"
        if op not in ("time", "pace", "burst", "own"):
            return reply
        if isinstance(reply, Fault):
            seen.append(op)
            return reply
        if op == "time" and (timed or baseline_as_here):
            seen.append("time*")
            samples = {side: [s * by for s in values] if side in timed else values
                       for side, values in reply.header["samples_s"].items()}
            if baseline_as_here:
                samples["baseline"] = [here[-1]] * len(samples["baseline"])
            return dataclasses.replace(reply, header={**reply.header, "samples_s": samples})
        factor = {"time": 1.0, "burst": by if seen.count("burst*") < bursts else 1.0,
                  "pace": pace, "own": candidate_after_pace}[op]
        if factor != 1.0:
            seen.append(op + "*")
            return dataclasses.replace(reply, wall_s=reply.wall_s * factor)
        seen.append(op)
        return reply

    monkeypatch.setattr(evaluator.channel, "ask", ask)
    return seen


# These tests read the timing's own interval, which too few timed calls leave out: on a busy
# two-core host 0.05 s has given too few.
ENOUGH_FOR_AN_INTERVAL = {**FAST, "time_budget_s": 0.3}


def _unbounded_by_the_cpu_clock(monkeypatch) -> None:
    """Leave out the bound a CPU's clock puts on every speedup (tested on its own): on a busy
    host its bursts can replace the timing's figure or leave none, whatever the baseline's
    bursts there did, which is what the tests below judge."""
    from pytest_kernelbench.judge import clock

    monkeypatch.setattr(clock, "bound_by_harness_clock", lambda bursts, ratio, *rest: ratio)


def test_one_slowed_burst_of_the_baseline_in_the_candidates_process_scales_nothing(monkeypatch):
    # A host that ran slowly through the timing (both sides alike) slowed the first burst of
    # the baseline there too; a candidate that slows the baseline there slows every burst.
    _unbounded_by_the_cpu_clock(monkeypatch)
    with Session(**ENOUGH_FOR_AN_INTERVAL) as session:
        seen = _slowed_there(monkeypatch, session.evaluator,
                             timed=("baseline", "candidate"), bursts=1)
        result = valid(session.evaluate(RELU, GOOD))
    assert seen[:3] == ["time*", "burst*", "burst"]  # the slowed one was measured again
    assert result["status"] == "passed", result["error"]
    assert not any("baseline took" in flag for flag in result["flags"]), result["flags"]
    # the timing's own figure stands
    assert result["speedup_interval"] is not None, (result["flags"], result["timing_stopped"])


def test_slow_bursts_after_a_timing_whose_baseline_fits_scale_nothing(monkeypatch):
    # Every burst of the baseline there ran ten times as long as here, but the timing's own
    # median of it did not: the slowness bought the candidate nothing.
    _unbounded_by_the_cpu_clock(monkeypatch)
    with Session(**ENOUGH_FOR_AN_INTERVAL) as session:
        seen = _slowed_there(monkeypatch, session.evaluator, baseline_as_here=True)
        result = valid(session.evaluate(RELU, GOOD))
    assert "pace" not in seen  # no burst measured again for it
    assert result["status"] == "passed", result["error"]
    assert not any("baseline took" in flag for flag in result["flags"]), result["flags"]
    assert result["speedup_interval"] is not None


def test_a_graph_timings_median_spares_no_slowed_baseline(monkeypatch):
    # A replayed graph's median is no eager call's: bursts of the baseline there that ran
    # ten times as long are held against the candidate even where that median fits here.
    from pytest_kernelbench.judge import speed_stage

    with Session(**FAST) as session:
        evaluator = session.evaluator
        check = speed_stage.check_timing

        def as_graph(ctx, case, record, *args):
            record["timing"] = "graph"  # as a CUDA run of a fast baseline times it
            return check(ctx, case, record, *args)

        monkeypatch.setattr(speed_stage, "check_timing", as_graph)
        seen = _slowed_there(monkeypatch, evaluator)
        result = valid(session.evaluate(RELU, GOOD))
    assert "pace" in seen
    [note] = [flag for flag in result["flags"] if "baseline took" in flag]
    assert "scaled by" in note


def test_a_worker_the_host_runs_slowly_keeps_its_speedup(monkeypatch):
    # The timing (both sides), the baseline's bursts there and the harness's own pure-Python
    # work there all ran ten times as long: the process ran slowly, its speedup stands.
    _unbounded_by_the_cpu_clock(monkeypatch)
    with Session(**FAST) as session:
        seen = _slowed_there(monkeypatch, session.evaluator,
                             timed=("baseline", "candidate"), pace=10.0)
        result = valid(session.evaluate(RELU, GOOD))
    assert "pace*" in seen and seen.count("burst*") >= 2
    assert result["status"] == "passed", result["error"]
    assert result["speedup_interval"] is not None  # the timing's own figure
    [note] = [flag for flag in result["flags"] if "baseline took" in flag]
    assert "the process ran slowly" in note and "scaled" not in note


def test_a_process_slow_only_after_its_timing_buys_a_slowed_baseline_nothing(monkeypatch):
    # The baseline's timing and bursts there thirty times as long, and by the time the harness's
    # work there is read, the process runs four times as slowly (a host that got busier after the
    # timing): the credit for a slow process holds only as far as the candidate's own calls,
    # read then, ran as slowly. Thirty: far past what two processes' spread on a CPU explains,
    # whatever the bursts here read.
    _unbounded_by_the_cpu_clock(monkeypatch)
    with Session(**FAST) as session:
        seen = _slowed_there(monkeypatch, session.evaluator, timed=("baseline",), pace=4.0,
                             candidate_after_pace=4.0, by=30.0)
        result = valid(session.evaluate(RELU, GOOD))
    assert "pace*" in seen and "own*" in seen
    [note] = [flag for flag in result["flags"] if "baseline took" in flag]
    bound = re.search(r"the candidate's own calls there ran only ([\d.]+)x", note)
    assert bound, note
    # the speedup is that bound: the credit applied to the timing's earlier figure of the
    # candidate would give about four times it (four: a busy host has read two processes'
    # paces, and a side's burst against its timing, 1.4x apart)
    assert result["speedup"] == pytest.approx(float(bound[1]), abs=1e-3)


def test_a_baseline_slowed_alone_in_the_candidates_process_is_scaled(monkeypatch):
    # The timing's baseline and its bursts there ten times as long, while the harness's own
    # work there ran as fast as here: the baseline alone was slowed there, as a candidate
    # that patches its operators slows it.
    with Session(**FAST) as session:
        seen = _slowed_there(monkeypatch, session.evaluator, timed=("baseline",))
        result = valid(session.evaluate(RELU, GOOD))
    assert "pace" in seen and seen.count("burst*") >= 2
    assert result["speedup_interval"] is None
    [note] = [flag for flag in result["flags"] if "baseline took" in flag]
    assert "scaled by" in note


def test_the_problems_cost_is_read_after_the_timing_not_while_it_holds_the_device(monkeypatch):
    # Nothing of it is timed: under the shared hold that follows the timing, other workers go
    # on meanwhile, where the timing's exclusive hold would keep them waiting.
    from pytest_kernelbench.gpu import roofline

    cost = roofline.problem_cost
    while_timing: list[bool] = []
    monkeypatch.setattr(roofline, "problem_cost", lambda *a: while_timing.append(
        devices.timing_in_progress()) or cost(*a))
    result = valid(evaluate(RELU, GOOD, **FAST))
    assert result["status"] == "passed" and result["speed_of_light"]["flops"] >= 0
    assert while_timing == [False]


def test_a_time_the_harness_clock_cannot_settle_gives_no_speedup(monkeypatch):
    # On a busy host the pairs of bursts may neither confirm nor refute the reported time:
    # the record says so, and counts as correct but not fast.
    import math

    from pytest_kernelbench.gpu import timing

    monkeypatch.setattr(timing, "clock_verdict",
                        lambda reported, baseline, candidate, slack: ("undecided", math.nan))
    result = valid(evaluate(RELU, GOOD, **{**FAST, "p": 0.5}))
    assert result["status"] == "inconclusive" and result["correct"]
    assert result["speedup"] is None and not result["fast"]["0.5"]
    assert any(flag.startswith("inconclusive: the harness's clock could neither confirm")
               for flag in result["flags"])
    assert any("never repeated their fastest" in flag for flag in result["flags"])
    # At p=0 such a time still passes: any time at all is a speedup above 0.
    result = valid(evaluate(RELU, GOOD, **FAST))
    assert result["status"] == "passed" and result["speedup"] is None and result["fast"]["0"]
