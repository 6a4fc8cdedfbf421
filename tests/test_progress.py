from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pytest_kernelbench.plugin.hooks import lost_interrupt
from pytest_kernelbench.reporting import progress
from pytest_kernelbench.reporting.results import RunResults
from pytest_kernelbench.settings import Settings
from pytest_kernelbench.suite.discovery import Candidate, Case, Problem

RELU = Problem(1, 2, "ReLU", Path("level1/2_ReLU.py"))
SCALE = Problem(1, 1, "Scale", Path("level1/1_Scale.py"))


def case(problem: Problem, set_name: str, with_candidate: bool = True) -> Case:
    if not with_candidate:
        return Case(problem, set_name, "missing", None)
    return Case(problem, set_name, "s0",
                Candidate(set_name, problem.level, problem.problem_id, "s0", Path("c.py")))


CASES = [case(SCALE, "a"), case(SCALE, "b", False), case(RELU, "a", False), case(RELU, "b")]


def test_every_case_counts_when_nothing_was_deselected():
    run = progress.Progress(CASES)
    assert run.cases == CASES and len(run.missing) == 2
    assert run.unfinished() == [progress.case_key(CASES[0]), progress.case_key(CASES[3])]
    for stage in progress.STAGES:
        run.reported(progress.item_id(CASES[0], stage))
    assert run.unfinished() == [progress.case_key(CASES[3])]


def test_under_k_only_the_selected_problems_and_sets_count():
    # -k Scale: set a's Scale items only; set b has no selected item, so its missing Scale
    # does not count, nor does set a's missing ReLU (ReLU is not selected).
    ids = [progress.item_id(CASES[0], stage) for stage in progress.STAGES]
    assert progress.Progress(CASES, ids).cases == [CASES[0]]
    # One item of b's ReLU as well: both problems and both sets, so both missing ones count.
    ids += [progress.item_id(CASES[3], "test_compile")]
    assert progress.Progress(CASES, ids).cases == CASES


@pytest.mark.parametrize(("when", "passed", "finished"), [
    ("setup", True, False), ("setup", False, True), ("call", True, True),
    ("call", False, True), ("teardown", False, False), ("???", False, True),
])
def test_an_item_is_finished_by_its_call_or_a_setup_that_did_not_pass(when, passed, finished):
    assert progress.item_finished(when, passed) is finished


PYTHON = Path(sys.executable).name  # the interpreter a `-m pytest` run is resumed with


@pytest.mark.parametrize(("args", "module", "expected"), [
    (["--kb-candidates=r1", "-n", "8"], False,
     "pytest --kb-candidates=r1 -n 8 --kb-resume=reports/kernelbench.json"),
    (["--kb-candidates=r1", "--kb-resume", "old.json", "-k", "a b"], True,
     f"{PYTHON} -m pytest --kb-candidates=r1 -k 'a b' --kb-resume=reports/kernelbench.json"),
    (["--kb-resume=old.jsonl", "--kb-candidates=r1"], False,
     "pytest --kb-candidates=r1 --kb-resume=reports/kernelbench.json"),
])
def test_the_resume_command_is_the_run_s_own_with_its_report_to_resume(args, module, expected,
                                                                         tmp_path):
    report = tmp_path / "reports" / "kernelbench.json"
    assert progress.resume_command(args, report, tmp_path, module) == expected


def test_cases_never_run_and_missing_ones_count_in_every_denominator():
    results = RunResults(Settings(Path("problems"), ()), "cpu", {}, 2)
    settled = {**progress.missing_record(CASES[0]), "status": "passed", "compiled": True,
               "correct": True, "speedup": 2.0, "candidate_path": "c.py"}
    results.add(settled, 2)
    results.add(progress.missing_record(CASES[1]), 2)
    not_run = {progress.case_key(c): progress.not_run_record(c) for c in (CASES[3],)}
    results.stopped_before(not_run, 1, "pytest --kb-resume=r.json")
    rows = {row.candidate_set: row for row in results.summaries()[0]}
    assert (rows["a"].problems, rows["a"].correct, rows["a"].fast[1.0]) == (1, 1, 1.0)
    # b: a missing problem and one never run, both not correct, neither dropped.
    assert (rows["b"].problems, rows["b"].missing, rows["b"].correct) == (2, 1, 0)
    assert rows["b"].fast[0.0] == 0.0
    assert results.completion() == {"complete": False, "cases_not_run": 1,
                                    "resume_command": "pytest --kb-resume=r.json"}
    assert [r["status"] for r in results.all_records()] == ["passed", "missing", "not_run"]


def test_a_lock_error_raised_over_a_ctrl_c_gives_the_ctrl_c_back():
    try:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise RuntimeError("release unlocked lock") from None
    except RuntimeError as exc:
        lost = exc
    assert isinstance(lost_interrupt(lost), KeyboardInterrupt)
    assert lost_interrupt(RuntimeError("release unlocked lock")) is None
    assert lost_interrupt(RuntimeError("something else")) is None
