from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from pytest_kernelbench.engine.schedule import (
    CostsError,
    builds_last,
    expected_cost,
    longest_first,
    mark_settled,
    next_ready,
    read_costs,
    shard_of,
    suite_costs,
    with_suite_costs,
)
from pytest_kernelbench.settings import parse_shard
from pytest_kernelbench.suite.discovery import Candidate, Case, Problem


def _case(level: int, pid: int, set_name: str = "a", candidate: bool = True) -> Case:
    problem = Problem(level, pid, f"P{pid}", Path(f"level{level}/{pid}_P{pid}.py"))
    found = Candidate(set_name, level, pid, "s0", Path(f"{set_name}/{pid}.py")) if candidate else None
    return Case(problem, set_name, "s0", found)


def _record(level: int, pid: int, seconds: float, set_name: str = "a") -> dict:
    return {"candidate_set": set_name, "level": level, "problem_id": pid, "sample": "s0",
            "held": {"compile": [100.0, 101.0], "correct": [100.5, 102.0],
                     "speed": [102.0, 100.0 + seconds]}}


def test_a_case_costs_the_span_its_stages_held_the_device(tmp_path):
    report = tmp_path / "r.json"
    report.write_text(json.dumps({"results": [_record(1, 3, 7.5),
                                              {"candidate_set": "a", "level": 1,
                                               "problem_id": 4, "sample": "s0"}]}))
    assert read_costs(report) == {("a", 1, 3, "s0"): 7.5}  # a record never run costs nothing known


def test_an_unreadable_costs_report_names_its_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(CostsError, match="bad.json: not a kernelbench JSON report"):
        read_costs(bad)


def test_unknown_cases_cost_what_their_problem_or_level_costs_elsewhere():
    costs = {("a", 1, 1, "s0"): 4.0, ("b", 1, 1, "s0"): 6.0, ("a", 1, 2, "s0"): 1.0,
             ("a", 2, 9, "s0"): 30.0}
    assert expected_cost(_case(1, 1, "a"), costs) == 4.0           # its own record
    assert expected_cost(_case(1, 1, "new"), costs) == 5.0         # the problem in other sets
    assert expected_cost(_case(1, 7), costs) == pytest.approx(4.0)  # level 1's median
    assert expected_cost(_case(3, 1), costs) > 0                    # nothing known: a guess
    assert expected_cost(_case(2, 9, candidate=False), costs) == 0.0  # missing: reported at once


def test_xdist_gets_the_longest_cases_first():
    cases = [_case(1, 1), _case(1, 2), _case(2, 1), _case(3, 1)]
    costs = {("a", 1, 1, "s0"): 2.0, ("a", 1, 2, "s0"): 40.0, ("a", 2, 1, "s0"): 2.0,
             ("a", 3, 1, "s0"): 9.0}
    order = longest_first(cases, costs)
    assert [(c.problem.level, c.problem.problem_id) for c in order] == [(1, 2), (3, 1), (1, 1), (2, 1)]
    # with no report at all, deeper levels first, the rest in problem order
    assert [c.problem.level for c in longest_first(cases, {})] == [3, 2, 1, 1]


def test_cases_that_build_go_after_the_others_each_in_its_order():
    cases = [_case(3, 1), _case(2, 1), _case(1, 1), _case(1, 2), _case(2, 2)]
    building = {(2, 1), (1, 1)}
    order = builds_last(cases, lambda c: (c.problem.level, c.problem.problem_id) in building)
    assert [(c.problem.level, c.problem.problem_id) for c in order] == \
        [(3, 1), (1, 2), (2, 2), (2, 1), (1, 1)]


def test_cases_that_build_keep_their_place_where_an_earlier_report_measured_them():
    # L2/90 and L1/26 of CUDA-L1 build inside their items in every run (about 70 s): put last,
    # they ran alone at the end of a warm run. Measured, they go first; unmeasured builds last.
    cases = [_case(1, 1), _case(1, 2), _case(2, 1), _case(2, 2)]
    building = {(1, 1), (2, 1), (2, 2)}
    costs = {("a", 1, 1, "s0"): 70.0, ("a", 1, 2, "s0"): 3.0, ("a", 2, 1, "s0"): 2.0}
    order = builds_last(longest_first(cases, costs), lambda c: (c.problem.level,
                                                                c.problem.problem_id) in building,
                        costs)
    assert [(c.problem.level, c.problem.problem_id) for c in order] == \
        [(1, 1), (1, 2), (2, 1), (2, 2)]
    # An unmeasured case that builds goes last even where its guessed cost (its level's
    # median, 1.5 s) would put it before a cheaper case that builds nothing.
    cases.append(_case(2, 3))
    costs[("a", 2, 3, "s0")] = 1.0
    order = builds_last(longest_first(cases, costs), lambda c: (c.problem.level,
                                                                c.problem.problem_id) in building,
                        costs)
    assert [(c.problem.level, c.problem.problem_id) for c in order] == \
        [(1, 1), (1, 2), (2, 1), (2, 3), (2, 2)]


@pytest.mark.parametrize(("text", "parsed"), [("1/1", (1, 1)), ("2/4", (2, 4))])
def test_a_shard_is_written_i_of_n(text, parsed):
    assert parse_shard(text) == parsed


@pytest.mark.parametrize("text", ["0/2", "3/2", "2", "a/b", "1/0", "-1/2"])
def test_a_shard_outside_1_to_n_is_refused(text):
    with pytest.raises(argparse.ArgumentTypeError, match="expected"):
        parse_shard(text)


def test_shards_cover_every_case_once_and_balance_the_expected_work():
    cases = [_case(level, pid) for level in (1, 2, 3) for pid in range(1, 9)]
    costs = {("a", 3, 1, "s0"): 40.0, ("a", 1, 2, "s0"): 1.0}
    split = shard_of(cases, costs, 3)
    assert set(split) == set(cases) and set(split.values()) == {1, 2, 3}
    assert shard_of(list(reversed(cases)), costs, 3) == split  # the same on every machine
    work = {s: sum(expected_cost(c, costs) for c in cases if split[c] == s) for s in (1, 2, 3)}
    # The 40 s case fills one shard nearly alone; the rest share the remainder evenly.
    assert max(work.values()) - min(work.values()) <= 40.0 - 8.0
    alone = split[_case(3, 1)]
    assert sum(split[c] == alone for c in cases) < len(cases) / 3


def test_a_first_run_weighs_a_problem_by_the_cost_its_suite_ships(tmp_path):
    (tmp_path / "costs.yaml").write_text("cpu:\n  level1/9_P9: 39.0\n  level3/4_P4: 10.6\n"
                                         "cuda:\n  level1/9_P9: 1.5\n")
    assert suite_costs(tmp_path, "cpu") == {(1, 9): 39.0, (3, 4): 10.6}
    assert suite_costs(tmp_path, "cuda:1") == {(1, 9): 1.5}
    costs = with_suite_costs({}, suite_costs(tmp_path, "cpu"))
    # level 1's shipped figure outweighs the level guesses (level 3 would come first)
    assert expected_cost(_case(1, 9), costs) == 39.0
    assert expected_cost(_case(1, 5), costs) == 39.0  # its level's known figure
    assert [c.problem.problem_id for c in longest_first([_case(3, 4), _case(1, 9)], costs)] == [9, 4]


def test_a_problem_the_report_measured_keeps_the_reports_figure(tmp_path):
    measured = {("a", 1, 9, "s0"): 12.0}
    costs = with_suite_costs(measured, {(1, 9): 39.0, (1, 10): 20.0})
    assert expected_cost(_case(1, 9, set_name="b"), costs) == 12.0  # another set's sample
    assert expected_cost(_case(1, 10), costs) == 20.0
    assert not any(key[0] == "a" and key[2] == 10 for key in costs)  # never a case's own


def test_a_suite_without_costs_has_none_and_a_broken_one_is_named(tmp_path):
    assert suite_costs(tmp_path, "cpu") == {}
    (tmp_path / "costs.yaml").write_text("cpu:\n  not-a-problem: 3\n")
    with pytest.raises(CostsError, match=r"costs.yaml: not a table of seconds per problem"):
        suite_costs(tmp_path, "cpu")


def test_a_case_whose_build_is_over_takes_its_place_by_cost_again(tmp_path):
    # builds_last queued "a" and "c" (they build) behind "b" and "d"; by cost: a, b, c, d
    rank = {"a": 0, "b": 1, "c": 2, "d": 3}
    waiting = {"a": tmp_path / "a.py", "c": tmp_path / "c.py"}
    marks = tmp_path / "settled"
    marks.mkdir()
    assert next_ready(["b", "d", "a", "c"], rank, waiting, marks) == "b"
    mark_settled(marks, waiting["c"], "elsewhere")  # another worker builds it: not over
    assert next_ready(["d", "a", "c"], rank, waiting, marks) == "d"
    mark_settled(marks, waiting["c"], "failed")  # over: its item only reads the failure
    assert next_ready(["d", "a", "c"], rank, waiting, marks) == "c"
    # only cases whose builds are still being made: xdist's own choice, the first queued
    assert next_ready(["a"], rank, waiting, marks) is None
    # with no case that builds, the order by cost is the queue's
    assert next_ready(["b", "d"], rank, {}, marks) == "b"
