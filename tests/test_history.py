"""The history a report keeps of its runs: numbered copies, and runs named by number, latest or
path; then, in inner runs, one copy per run (resumed too) and --kb-compare."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from pytest_kernelbench.reporting import history

FAST = ("--kb-trials=1", "--kb-p=0")
WRITTEN = datetime(2025, 1, 7, 10, 15, tzinfo=timezone.utc)


def kept_runs(report: Path, count: int) -> list[history.Entry]:
    return [history.keep(report, f'{{"run": {n}}}\n', WRITTEN + timedelta(hours=n))
            for n in range(count)]


def test_each_report_written_is_kept_numbered_upward_beside_it(tmp_path):
    report = tmp_path / "reports" / "kernelbench.json"
    first, second, third = kept_runs(report, 3)
    folder = tmp_path / "reports" / "history" / "kernelbench"
    assert history.folder_of(report) == folder
    assert [entry.path.name for entry in (first, second, third)] == [
        "0001_20250107T101500Z.json", "0002_20250107T111500Z.json", "0003_20250107T121500Z.json"]
    assert third.path.read_text() == '{"run": 2}\n' and third.when == "2025-01-07 12:15:00 UTC"
    (folder / "notes.txt").write_text("not a run")
    (folder / "0002_20250107T111500Z.json").unlink()
    assert [entry.number for entry in history.entries(folder)] == [1, 3]
    # A gap stays a gap; the next run goes above the highest.
    assert history.keep(report, "{}", WRITTEN).number == 4
    # Another report keeps a history of its own.
    other = history.keep(tmp_path / "reports" / "fp16.json", "{}", WRITTEN)
    assert (other.number, other.path.parent.name) == (1, "fp16")


def test_two_runs_kept_in_the_same_second_get_two_numbers(tmp_path):
    report = tmp_path / "report.json"
    numbers = [history.keep(report, "{}", WRITTEN).number for _ in range(2)]
    assert numbers == [1, 2]


@pytest.mark.parametrize(("given", "found"), [
    ("latest", "0003_20250107T121500Z.json"),
    ("2", "0002_20250107T111500Z.json"),
    ("0002", "0002_20250107T111500Z.json"),
    ("elsewhere.json", "elsewhere.json"),
])
def test_a_run_is_named_by_its_number_latest_or_a_path(tmp_path, given, found):
    kept_runs(tmp_path / "report.json", 3)
    (tmp_path / "elsewhere.json").write_text("{}")
    folder = tmp_path / "history" / "report"
    assert history.resolve(given, folder, base=tmp_path).name == found


@pytest.mark.parametrize(("runs", "given", "message"), [
    (3, "7", "no run 7 in {folder} (it holds runs 1-3)"),
    (0, "1", "no run 1 in {folder} (it holds no runs yet)"),
    (0, "latest", "no runs in {folder} yet (each run that writes a report keeps a copy there)"),
    (1, "nowhere.json", "no such file: nowhere.json (nor a run number or 'latest' of {folder})"),
])
def test_a_run_the_history_does_not_hold_is_refused_in_one_line_naming_the_folder(
        tmp_path, monkeypatch, runs, given, message):
    monkeypatch.chdir(tmp_path)
    kept_runs(tmp_path / "report.json", runs)
    folder = tmp_path / "history" / "report"
    with pytest.raises(history.HistoryError) as raised:
        history.resolve(given, folder)
    assert str(raised.value) == message.format(folder="history/report")


def test_the_runs_held_are_said_as_ranges():
    entries = [history.Entry(n, Path(f"{n}.json"), WRITTEN) for n in (1, 2, 4, 6, 7)]
    assert history.numbers_held(entries) == "it holds runs 1-2, 4, 6-7"
    assert history.numbers_held(entries[2:3]) == "it holds run 4"


def test_each_run_keeps_one_copy_and_compares_with_a_run_before_it(kb):
    kb.run("good", args=(*FAST, "-k", "Scale")).stdout.fnmatch_lines([
        "kernelbench report: *report.json",
        "kernelbench history: run 1, history/report/0001_*.json"])
    folder = kb.pytester.path / "history" / "report"
    # A resumed run is one run: one copy, however many records it took from before.
    resumed = (*FAST, "-k", "Scale", "--kb-resume=report.json")
    kb.run("good", args=(*resumed, "--kb-compare=latest")).stdout.fnmatch_lines([
        "kernelbench history: run 2, history/report/0002_*.json",
        "*- kernelbench: compared with run 1 -*",
        "before: run 1 *history/report/0001_*.json; * UTC; cpu",
        "after:  run 2 (this run)  history/report/0002_*.json; * UTC; cpu",
        "1 case(s) in both, 1 unchanged",
        "beyond noise: now fails 0, now passes 0, faster 0, slower 0, other status change 0",
        "within noise 0: speedup intervals that overlap, or a move of 7% or less *"],
        consecutive=True)
    kept = [entry.path for entry in history.entries(folder)]
    assert [path.name[:5] for path in kept] == ["0001_", "0002_"]
    assert kept[1].read_text() == (kb.pytester.path / "report.json").read_text()
    # The report this run overwrites stands for the run that wrote it, as its copy keeps it.
    kb.run("good", args=(*resumed, "--kb-compare=report.json")).stdout.fnmatch_lines([
        "*- kernelbench: compared with run 2 -*", "before: run 2 *", "after:  run 3 (this run) *"])
    # No report, no copy; the comparison reads this run's own records. A run is named by
    # its path too.
    alone = kb.run("good", args=(*resumed, "--kb-report=none", f"--kb-compare={kept[0]}"))
    alone.stdout.fnmatch_lines(["*- kernelbench: compared with run 1 -*", "before: *",
                                "after:  this run  cpu", "1 case(s) in both, 1 unchanged"],
                               consecutive=True)
    assert "kernelbench history:" not in alone.stdout.str()
    assert len(history.entries(folder)) == 3


@pytest.mark.parametrize(("given", "message"), [
    ("7", "no run 7 in history/report (it holds no runs yet)"),
    ("report.json", "report.json is the report this run overwrites, and history/report holds no "
                    "copy of it: copy it aside and name the copy"),
])
def test_a_run_to_compare_with_that_the_history_lacks_stops_the_run_in_one_line(
        kb, given, message):
    (kb.pytester.path / "report.json").write_text("{}")  # a report from before any history
    result = kb.run("good", args=(f"--kb-compare={given}",))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert result.stderr.lines[0] == f"ERROR: --kb-compare: {message}"
