from __future__ import annotations

from pathlib import Path

from pytest_kernelbench.reporting import progress
from pytest_kernelbench.reporting.results import RunResults
from pytest_kernelbench.settings import Settings
from pytest_kernelbench.suite.discovery import Candidate, Case, Problem


def case(problem_id: int) -> Case:
    problem = Problem(1, problem_id, f"P{problem_id}", Path(f"level1/{problem_id}_P.py"))
    return Case(problem, "a", "s0", Candidate("a", 1, problem_id, "s0", Path(f"{problem_id}.py")))


def test_a_case_the_run_stopped_in_is_not_run_keeps_what_it_measured_and_is_not_correct():
    cases = [case(1), case(2), case(3), case(4)]
    results = RunResults(Settings(Path("problems"), ()), "cpu", {}, 2)
    upstream = {"rules": "v0", "compiled": True, "correct": True, "speedup": None}
    compiled = {**progress.not_run_record(cases[0]), "status": None, "error": None,
                "compiled": True, "upstream": upstream}
    judged = {**compiled, "problem_id": 2,
              "status": "passed", "correct": True}
    failed = {**compiled, "problem_id": 3, "status": "mismatch", "error": "worst element ...",
              "upstream": {**upstream, "correct": False}}
    for record, stage in ((compiled, 0), (judged, 1), (failed, 1)):
        results.add(record, stage)
    unfinished = {progress.case_key(c): progress.not_run_record(c) for c in cases}
    results.stopped_before(unfinished, 4, None)
    records = {r["problem_id"]: r for r in results.all_records()}
    assert {k: r["status"] for k, r in records.items()} == \
        {1: "not_run", 2: "not_run", 3: "mismatch", 4: "not_run"}
    assert records[1]["error"] == "the run stopped in this case: it compiled and was not judged"
    assert records[2]["error"] == ("the run stopped in this case: it passed correctness and was "
                                   "not timed")
    assert records[4]["error"] == "the run stopped before this case ran"
    assert records[1]["compiled"] and records[2]["upstream"]["compiled"]  # what was measured
    assert not any(r["correct"] for r in records.values())
    (row,), (upstream_row,) = results.summaries()
    assert (row.problems, row.compiled, row.correct) == (4, 3, 0)
    assert upstream_row.correct == 0
