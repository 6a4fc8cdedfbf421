from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytest_kernelbench.reporting import cli, resume, scoring

EXAMPLES = Path(__file__).parent / "examples"
FAST = ("--kb-trials=1", "--kb-p=0")


# What a speed stage says of a correct candidate can move between two runs on a busy host (a
# speedup near p, bursts a loaded host never confirms): between runs, those compare as correct.
TIMED = {"passed": "correct", "slower": "correct", "inconclusive": "correct"}


def statuses(records) -> dict[tuple, str]:
    return {resume.record_key(r): TIMED.get(r["status"], r["status"]) for r in records}


def test_two_shards_merge_to_the_verdicts_of_one_run(kb):
    whole = kb.run("good", "broken", args=(*FAST, "--kb-level=1", "--kb-timeout=5"))
    one_run = kb.report()
    reports, ran = [], 0
    for index in (1, 2):
        shard = kb.run("good", "broken", args=(*FAST, "--kb-level=1", "--kb-timeout=5",
                                               f"--kb-shard={index}/2"))
        ran += sum(shard.parseoutcomes().get(k, 0) for k in ("passed", "failed", "skipped"))
        path = kb.pytester.path / f"shard{index}.json"
        shutil.copy(kb.pytester.path / "report.json", path)
        reports.append(path)
    # Each item ran in exactly one shard, and no shard was empty.
    assert ran == sum(whole.parseoutcomes().get(k, 0) for k in ("passed", "failed", "skipped"))
    assert all(json.loads(path.read_text())["results"] for path in reports)
    merged_path = kb.pytester.path / "merged.json"
    assert cli.main(["merge", "-o", str(merged_path), *map(str, reports)]) == 0
    merged = json.loads(merged_path.read_text())
    assert statuses(merged["results"]) == statuses(one_run["results"])
    counts = ("problems", "missing", "compiled", "correct")

    def table(summary: list[dict]) -> dict:
        return {(row["candidate_set"], row["level"]): [row[k] for k in counts] for row in summary}

    assert table(merged["summary"]) == table(one_run["summary"])
    # fast_0 turns on speed verdicts, which a busy host can leave undecided in one run and not
    # in another: the merged figure is checked against the merged records it must come from.
    for row in merged["summary"]:
        rows = [r for r in merged["results"]
                if (r["candidate_set"], r["level"]) == (row["candidate_set"], row["level"])]
        assert row["fast_0"] == pytest.approx(scoring.fast_p(rows, 0.0, row["problems"]))


def good_run(kb):
    """The good set, every stage: the report of a run that nothing interrupted."""
    return kb.run_shared("good", args=FAST, keep=("report.json",))


def test_an_interrupted_run_resumed_gives_the_report_of_an_uninterrupted_one(kb):
    uninterrupted = statuses(good_run(kb).report()["results"])
    # The first run gets as far as the Scale case (and dies: only its stream is left).
    kb.run("good", args=(*FAST, "-k", "Scale"))
    (kb.pytester.path / "report.json").unlink()
    stream = kb.pytester.path / "report.jsonl"
    before = {resume.record_key(r): r for r in resume.read_records(stream)}
    scale = before[("good", 1, 1, "s0")]
    with stream.open("a") as handle:
        handle.write('{"stage": 2, "record": {"candidate_s')  # cut off mid-line by the crash
    result = kb.run("good", args=(*FAST, f"--kb-resume={stream}"))
    result.stdout.fnmatch_lines(["*3 deselected*"])  # the Scale case's three items
    result.stdout.fnmatch_lines([f"kernelbench: reused 1 of 1 records from {stream}; running 2"])
    records = {resume.record_key(r): r for r in kb.report()["results"]}
    assert statuses(records.values()) == uninterrupted
    assert records[("good", 1, 1, "s0")]["candidate_time"] == scale["candidate_time"]
    # The new stream holds the reused record too: a second interruption loses nothing.
    assert ("good", 1, 1, "s0") in {resume.record_key(r) for r in resume.read_records(stream)}


def test_a_case_whose_speed_item_never_ran_is_run_again_when_resumed(kb, correct_and_timed):
    # A run stopped between a case's correctness and its timing (or one that selected no speed
    # items) leaves a record that says `passed` with no speedup: resuming must time it, not
    # keep a verdict on speed that was never measured.
    kb.run("good", args=(*FAST, "--kb-level=1", "-m", "not kb_speed"))
    stream = kb.pytester.path / "report.jsonl"
    unfinished = {resume.record_key(r): r for r in resume.read_records(stream)
                  if r["status"] == "passed"}
    assert len(unfinished) == 2 and all(r["speedup"] is None for r in unfinished.values())
    result = kb.run("good", args=(*FAST, "--kb-level=1", f"--kb-resume={stream}"))
    # the third problem has no candidate, and no items; a speed item a busy host could not
    # settle is skipped as inconclusive, having run
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) + outcomes.get("skipped", 0) == 6, outcomes
    records = {resume.record_key(r): r for r in kb.report()["results"]}
    for key in unfinished:
        record = records[key]
        assert record["verdicts"]["speed"] in ("passed", "inconclusive")
        assert record["candidate_time"] is not None  # timed now
        correct_and_timed(record)
        # without a speedup only where the harness's clock could not settle the time
        assert record["speedup"] is not None or any("never repeated their fastest" in flag
                                                    for flag in record["flags"])


def test_a_record_is_not_reused_once_its_candidate_changed(kb):
    candidates = kb.pytester.path / "mine"
    shutil.copytree(EXAMPLES / "candidates" / "good", candidates)
    argv = [*kb.plugin_args, f"--kb-problems={EXAMPLES / 'problems'}", "--kb-report=report.json",
            "--benchmark-max-time=0.001", "-p", "no:cacheprovider", f"--kb-candidates={candidates}",
            *FAST, "-k", "ReLU"]
    kb.pytester.runpytest(*argv)
    first = kb.pytester.path / "first.json"
    shutil.copy(kb.pytester.path / "report.json", first)
    relu = candidates / "level1" / "2_ReLU.py"
    relu.write_text(relu.read_text() + "\n# changed\n")
    # -k ReLU picks 2_ReLU and 1_Linear_ReLU (six items of nine): the unchanged one is
    # reused, the changed one runs again.
    result = kb.pytester.runpytest(*argv, f"--kb-resume={first}")
    result.assert_outcomes(passed=3, deselected=6)
    result.stdout.fnmatch_lines(["level1/2_ReLU ...*"])
    result.stdout.fnmatch_lines([f"kernelbench: reused 1 of 2 records from {first}; running 1"])
    # Other verdict settings: nothing is reused.
    result = kb.pytester.runpytest(*argv, f"--kb-resume={first}", "--kb-trials=2")
    result.assert_outcomes(passed=6, deselected=3)
    result.stdout.fnmatch_lines([f"kernelbench: reused 0 of 2 records from {first}; running 2"])


def test_merging_reports_made_with_other_settings_is_refused(kb, capsys):
    kb.run("good", args=(*FAST, "-k", "Scale"))
    shutil.copy(kb.pytester.path / "report.json", kb.pytester.path / "a.json")
    kb.run("good", args=("--kb-trials=2", "--kb-p=0", "-k", "ReLU"))
    code = cli.main(["merge", "-o", "out.json", str(kb.pytester.path / "a.json"),
                     str(kb.pytester.path / "report.json")])
    assert code == 2
    assert "were made with different verdict settings" in capsys.readouterr().err


def test_the_report_tool_prints_fast_p_for_any_thresholds(kb, capsys):
    report = kb.pytester.path / "report.json"
    report.write_text(good_run(kb).files["report.json"])
    assert cli.main(["summary", str(report), "--p", "0,1,2"]) == 0
    out = capsys.readouterr().out
    assert "fast_0" in out and "fast_1" in out and "fast_2" in out and "| good" in out


def test_a_missing_resume_file_is_a_usage_error(kb):
    result = kb.run("good", args=("--kb-resume=nowhere.json",))
    result.stderr.fnmatch_lines(["*--kb-resume: no such file: nowhere.json*"])


def test_the_report_tool_fails_a_summary_under_its_floor(kb, capsys):
    report = str(kb.pytester.path / "report.json")
    Path(report).write_text(good_run(kb).files["report.json"])
    assert cli.main(["summary", report, "--fail-under", "fast_0=0.5"]) == 0
    assert cli.main(["summary", report, "--fail-under", "fast_0=1"]) == 1
    assert "below the floor: good level 1: fast_0 0.667 < 1" in capsys.readouterr().out
    assert cli.main(["summary", report, "--fail-under", "fast_7=0.1"]) == 2
    assert "no column fast_7 in the summary" in capsys.readouterr().err


def _rec(problem_id: int, status: str, speedup: float | None = None) -> dict:
    return {"candidate_set": "r1", "level": 1, "problem_id": problem_id, "sample": "s0",
            "status": status, "correct": status in ("passed", "slower"), "speedup": speedup,
            "error": None if status in ("passed", "slower") else "worst element ..."}


def test_a_report_whose_result_names_no_case_is_refused_saying_what_it_lacks(tmp_path):
    keyless = {key: value for key, value in _rec(1, "passed", 1.2).items() if key != "sample"}
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"results": [_rec(2, "mismatch"), keyless]}))
    with pytest.raises(resume.ResumeError, match="report.json: .*a record without sample"):
        resume.read_records(report)
    stream = tmp_path / "report.jsonl"
    stream.write_text(json.dumps({"stage": 2, "record": keyless}) + "\n\n")
    with pytest.raises(resume.ResumeError, match="report.jsonl:1: not a kernelbench record"):
        resume.read_records(stream)
