"""judge/outcome.py: what a stage concludes, and the records of cases that never reached a
candidate."""

from __future__ import annotations

from pathlib import Path

from pytest_kernelbench import faults, record
from pytest_kernelbench.judge.outcome import (
    Outcome,
    base_record,
    cheat,
    failed,
    graph_hint,
    problem_outcome,
    skipped_after,
    stream_hint,
)
from pytest_kernelbench.suite.discovery import Case, Problem

STREAMS = ["creates CUDA streams (torch.cuda.Stream)"]
GRAPHS = ["captures CUDA graphs (a replay reuses the addresses it was captured with)"]


def fresh() -> record.Record:
    return record.new_record(1, 2, "ReLU", "good", "s0", "good/level1/2_ReLU.py")


def missing_case() -> Case:
    return Case(Problem(1, 2, "ReLU", Path("problems/level1/2_ReLU.py")), "good", "s0", None)


def test_a_cheat_says_why_a_candidate_with_streams_most_likely_cheated():
    made = {**fresh(), "static_scan": STREAMS, "speedup": 3.0}
    outcome = cheat(made, "timed output wrong")
    assert outcome.status == faults.CHEAT and made["speedup"] is None
    assert outcome.message.startswith("timed output wrong") and stream_hint(made) in outcome.message


def test_a_cheat_without_streams_says_only_what_was_wrong():
    outcome = cheat(fresh(), "timed output wrong")
    assert outcome.message == "timed output wrong" and outcome.record["error"] == outcome.message


def test_a_cuda_fault_of_a_candidate_that_captures_graphs_gets_a_hint_and_others_none():
    assert "captures CUDA graphs" in graph_hint({**fresh(), "static_scan": GRAPHS})
    assert graph_hint({**fresh(), "static_scan": STREAMS}) == "" == stream_hint(fresh())


def test_a_stage_after_a_failed_one_is_skipped_with_its_status():
    failed_outcome = Outcome(faults.MISMATCH, "trial 0 differs", record=fresh())
    skipped = skipped_after(failed_outcome, "correct")
    assert skipped.skipped and skipped.status == faults.MISMATCH
    assert skipped.message == "correct failed (mismatch)"
    assert skipped.record is not failed_outcome.record


def test_a_stage_after_a_skipped_one_is_skipped_for_the_same_reason():
    earlier = Outcome(faults.MISSING, "no candidate", skipped=True, record=fresh())
    assert skipped_after(earlier, "compile").message == "no candidate"


def test_only_an_outcome_that_passed_and_ran_counts_as_passed():
    assert Outcome(faults.PASSED).passed
    assert not Outcome(faults.PASSED, skipped=True).passed
    assert not Outcome(faults.SLOWER).passed


def test_a_failing_outcome_and_its_record_say_the_same():
    outcome = failed(fresh(), faults.RUNTIME_ERROR, "trial 0: boom", "Traceback ...")
    assert (outcome.status, outcome.message, outcome.details) == \
        (faults.RUNTIME_ERROR, "trial 0: boom", "Traceback ...")
    assert outcome.record["status"] == faults.RUNTIME_ERROR
    assert outcome.record["error"] == "trial 0: boom"


def test_a_broken_problem_is_said_of_the_problem_not_the_candidate():
    outcome = problem_outcome(missing_case(), "its reference cannot be built")
    assert outcome.status == faults.PROBLEM_ERROR and not outcome.skipped
    assert outcome.message.startswith("the problem, not the candidate")
    assert "2_ReLU.py: its reference cannot be built" in outcome.record["error"]


def test_the_record_of_a_case_without_a_candidate_names_none():
    made = base_record(missing_case())
    assert made["candidate_path"] is None
    assert (made["level"], made["problem_id"], made["candidate_set"]) == (1, 2, "good")
