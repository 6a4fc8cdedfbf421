"""kernelbench-report over small reports written here (no run needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_kernelbench.reporting import cli


def record(problem_id: int, status: str, speedup: float | None = None, candidate: str = "c1",
           set_name: str = "r1") -> dict:
    correct = status in ("passed", "slower")
    return {"candidate_set": set_name, "level": 1, "problem_id": problem_id, "sample": "s0",
            "status": status, "compiled": correct or status == "mismatch", "correct": correct,
            "speedup": speedup, "error": None if correct else f"{status} ...",
            "fingerprint": {"candidate": candidate, "problem": "p1", "settings": "s1"}}


def write_report(path: Path, records: list[dict], p: float = 1.0) -> str:
    path.write_text(json.dumps({"config": {"p": p}, "results": records}))
    return str(path)


def test_two_runs_of_one_set_are_summarised_side_by_side_labelled_by_file(tmp_path, capsys):
    run1 = write_report(tmp_path / "run1.json", [record(9, "slower", 0.98), record(10, "passed", 2.0)])
    run2 = write_report(tmp_path / "run2.json", [record(9, "passed", 1.04), record(10, "passed", 2.1)])
    assert cli.main(["summary", run1, run2]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    lines = captured.out.splitlines()
    assert lines[0] == ("run1.json, run2.json: runs of their own (they differ on a case they "
                        "share), summarised side by side, not merged")
    rows = [line for line in lines if line.startswith("| r1")]
    assert [row.split("|")[1].strip() for row in rows] == ["r1 (run1.json)", "r1 (run2.json)"]
    assert "0.500" in rows[0] and "1.000" in rows[1]  # fast_1: one of two, then both
    assert "543e" not in captured.out and "candidate" not in captured.out


def test_a_floor_under_side_by_side_runs_names_the_run_below_it(tmp_path, capsys):
    run1 = write_report(tmp_path / "run1.json", [record(9, "slower", 0.98)])
    run2 = write_report(tmp_path / "run2.json", [record(9, "passed", 1.04)])
    assert cli.main(["summary", run1, run2, "--fail-under", "fast_1=0.5"]) == 1
    assert "below the floor: r1 (run1.json) level 1: fast_1 0.000 < 0.5" in capsys.readouterr().out


def test_shards_and_a_record_a_resumed_run_carried_over_are_merged_not_set_side_by_side(
        tmp_path, capsys):
    shared = record(10, "passed", 2.0)
    shard1 = write_report(tmp_path / "shard1.json", [record(9, "passed", 1.5), shared])
    shard2 = write_report(tmp_path / "shard2.json", [record(11, "not_run"), shared,
                                                     record(12, "mismatch")])
    assert cli.main(["summary", shard1, shard2]) == 0
    out = capsys.readouterr().out
    assert "side by side" not in out
    assert [line.split("|")[1].strip() for line in out.splitlines() if line.startswith("| r1")] \
        == ["r1"]
    assert "| 4 " in out  # problems 9 to 12, once each


def test_merging_two_runs_is_refused_in_one_line_naming_the_case_and_both_statuses(tmp_path, capsys):
    run1 = write_report(tmp_path / "run1.json", [record(9, "slower", 0.98)])
    run2 = write_report(tmp_path / "run2.json", [record(9, "passed", 1.04)])
    assert cli.main(["merge", "-o", str(tmp_path / "m.json"), run1, run2]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "disagree on r1 level1/9 s0 (slower in run1.json, passed in run2.json)" in err
    assert "{" not in err and "c1" not in err
    run3 = write_report(tmp_path / "run3.json", [record(9, "slower", 0.97, candidate="c2")])
    assert cli.main(["merge", "-o", str(tmp_path / "m.json"), run1, run3]) == 2
    assert "(slower in both, from different candidate files)" in capsys.readouterr().err


@pytest.mark.parametrize("command", [[], ["--p", "0,2"], ["--fail-under", "fast_1=0.1"]])
def test_a_run_where_no_problem_could_be_judged_prints_one_line_not_empty_tables(
        tmp_path, capsys, command):
    broken = [{**record(problem_id, "problem_error"), "compiled": False}
              for problem_id in (1, 2)]
    broken.append({**record(2, "problem_error", set_name="r2"), "compiled": False})
    path = write_report(tmp_path / "broken.json", broken)
    assert cli.main(["summary", path, *command]) == (1 if "--fail-under" in command else 0)
    out = capsys.readouterr().out
    assert out == "kernelbench-report: no problem could be judged: 2 problem_error\n"
