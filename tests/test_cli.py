"""kernelbench-report over small reports written here (no run needed)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from pytest_kernelbench.judge import attribute_stage
from pytest_kernelbench.judge.outcome import Outcome, settled
from pytest_kernelbench.reporting import cli, report, resume
from pytest_kernelbench.reporting.results import RunResults
from pytest_kernelbench.settings import summary_ps


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


# --- one fast decision: the item, the record, the summary table and the report tool ----------

P = 1.0


def judged_case(problem_id: int, speedup: float, interval: list[float], torch_only: bool = False,
                upstream_speedup: float | None = None) -> tuple[Outcome, dict]:
    """A correct case's speed item as the judge settles it at p = 1 on a CPU (with
    --kb-require-kernel), and its record."""
    made = {"candidate_set": "r1", "level": 1, "problem_id": problem_id, "sample": "s0",
            "problem": "P", "candidate_path": "c.py", "compiled": True, "correct": True,
            "status": "passed", "error": None, "speedup": speedup, "baseline_time": 1e-3,
            "candidate_time": 1e-3 / speedup, "speedup_interval": interval, "flags": [],
            "torch_only": torch_only, "held": {"speed": [0.0, 1.0]},
            "fingerprint": {"candidate": f"c{problem_id}", "problem": "p", "settings": "s"},
            "upstream": {"rules": "main", "compiled": True, "correct": True,
                         "speedup": upstream_speedup or speedup}}
    context = SimpleNamespace(settings=SimpleNamespace(p=P, require_kernel=True), device="cpu")
    outcome = settled(attribute_stage.speed_verdict(context, made, speedup, []), "speed",
                      summary_ps(P))
    return outcome, outcome.record


CASES = [judged_case(1, 2.0, [1.9, 2.1]),  # passed
         judged_case(2, 0.5, [0.45, 0.55]),  # slower, shown
         judged_case(3, 1.01, [0.99, 1.03], upstream_speedup=1.2),  # not shown above p
         judged_case(4, 0.98, [0.9, 1.05]),  # not shown at or below p
         judged_case(5, 2.0, [1.9, 2.1], torch_only=True)]  # no kernel of its own


def fast_1(rows: list[dict]) -> float:
    [row] = rows
    return row["fast_1"]


def test_every_speed_verdict_counts_alike_in_its_item_record_summary_and_report_tool(
        tmp_path, capsys):
    items = [outcome for outcome, _ in CASES]
    records = [record for _, record in CASES]
    assert [(o.status, o.passed, o.skipped) for o in items] == [
        ("passed", True, False), ("slower", False, False), ("inconclusive", False, True),
        ("inconclusive", False, True), ("torch_only", False, False)]
    for outcome, made in CASES:  # the record reads what its item said
        assert made["status"] == outcome.status == made["verdicts"]["speed"]
        assert made["fast"]["1"] is outcome.passed
    assert [r["fast"]["0"] for r in records] == [True, True, True, True, False]
    assert [r["upstream"]["fast"]["1"] for r in records] == [True, False, True, False, True]
    counted = sum(o.passed for o in items) / len(items)

    # The terminal summary's tables.
    fingerprints = {resume.record_key(r): r["fingerprint"] for r in records}
    settings = SimpleNamespace(p=P, summary_ps=summary_ps(P), report_path=None)
    results = RunResults(settings, "cpu", fingerprints, 2)
    for made in records:
        results.add(made, 2)
    ours, theirs = (report.summary_rows(rows) for rows in results.summaries())
    assert fast_1(ours) == counted == 0.2 and ours[0]["fast_0"] == 0.8
    assert fast_1(theirs) == 0.6  # upstream's rule: correct and mean speedup above p

    # Two shards merged by the report tool, and its summary.
    shards = [write_report(tmp_path / f"shard{i}.json", records[i::2], P) for i in (0, 1)]
    merged_path = tmp_path / "merged.json"
    assert cli.main(["merge", "-o", str(merged_path), *shards]) == 0
    merged = json.loads(merged_path.read_text())
    assert (fast_1(merged["summary"]), fast_1(merged["summary_upstream"])) == (0.2, 0.6)
    capsys.readouterr()
    assert cli.main(["summary", *shards]) == 0
    out = capsys.readouterr().out
    # case 3's 1.01 is above p, and its interval 0.99-1.03 does not show it: the cell says so
    assert "| 0.800  | 0.200* |" in out
    assert "*fast_1: 1 correct problem(s) read a speedup above 1 that their timing does not " \
        "show" in " ".join(out.split())

    # A resumed run: the merged report's records reused as they were.
    reused = resume.reusable(resume.read_records(merged_path), fingerprints)
    assert len(reused) == len(records)
    resumed = RunResults(settings, "cpu", fingerprints, 2)
    resumed.resume(reused)
    assert [report.summary_rows(rows) for rows in resumed.summaries()] == [ours, theirs]


def test_a_report_made_before_fast_was_written_counts_by_the_same_rule(tmp_path, capsys):
    older = [{key: value for key, value in made.items() if key not in ("fast", "verdicts")}
             for _, made in CASES]
    for made in older:
        made["upstream"] = {k: v for k, v in made["upstream"].items() if k != "fast"}
    merged_path = tmp_path / "merged.json"
    assert cli.main(["merge", "-o", str(merged_path), write_report(tmp_path / "old.json", older)]) == 0
    merged = json.loads(merged_path.read_text())
    assert (fast_1(merged["summary"]), fast_1(merged["summary_upstream"])) == (0.2, 0.6)
    assert merged["summary"][0]["fast_0"] == 0.8


def test_a_summary_at_a_p_the_run_did_not_judge_says_which_cells_unshown_speedups_hold_down(
        tmp_path, capsys):
    # The main job on a CPU: speedups of eager against itself, no interval, judged at p = 1.
    thin = [{**record(n, "inconclusive", speedup), "compiled": True, "correct": True,
             "speedup_interval": [0.0, float("inf")], "speedup_margin": 0.2,
             "fast": {"0": True, "1": False}}
            for n, speedup in ((1, 0.987), (2, 1.01), (3, 0.85))]
    assert cli.main(["summary", write_report(tmp_path / "run.json", thin), "--p", "0.9"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[2].startswith("| r1  | 1     | 3        |") and "| 0.000*   |" in lines[2]
    assert " ".join(line.strip() for line in lines[3:]) == (
        "*fast_0.9: 2 correct problem(s) read a speedup above 0.9 that their timing does not "
        "show (no interval and too small a lead, or an interval that holds 0.9), so count as not "
        "fast: 2 in r1 level1")
