"""The history a report keeps of its runs: numbered copies, and runs named by number, latest or
path."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from pytest_kernelbench.reporting import history

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
