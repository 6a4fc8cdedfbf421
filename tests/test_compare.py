"""What moved between two runs, beyond the timing's noise: the rule, the lines, and
`kernelbench-report compare` over a history written here (no run needed)."""

from __future__ import annotations

import json
import math
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from pytest_kernelbench.reporting import cli, compare, history

CORRECT = ("passed", "slower", "inconclusive", "torch_only")


def timed(problem_id: int, status: str, speedup: float | None = None,
          interval: list[float] | None = None, error: str | None = None) -> dict:
    """A record as the judge writes one: a correct case's speedup with its 95% interval (None:
    the harness's clock set it, [0, inf]: too few calls for one)."""
    correct = status in CORRECT
    return {"candidate_set": "r1", "level": 1, "problem_id": problem_id, "sample": "s0",
            "status": status, "correct": correct, "speedup": speedup,
            "speedup_interval": interval, "error": error or (None if correct else f"{status} ...")}


def side(records: list[dict], device: str = "cuda:0", label: str = "a.json") -> compare.Side:
    return compare.Side(label, None, {"config": {"device": device}}, records)


def kinds(before: list[dict], after: list[dict], device: str = "cuda:0") -> list[str]:
    return [move.kind for move in compare.compare(side(before, device), side(after, device)).moves]


def test_two_runs_of_identical_code_whose_verdicts_flip_within_their_intervals_are_noise():
    # What a rerun of unchanged candidates gave: statuses flipped, the intervals still overlap.
    before = [timed(1, "inconclusive", 1.001, [0.97, 1.03]), timed(2, "passed", 1.05, [1.02, 1.08]),
              timed(3, "slower", 0.96, [0.93, 0.99]), timed(4, "mismatch")]
    after = [timed(1, "slower", 0.842, [0.70, 1.01]), timed(2, "inconclusive", 1.02, [0.99, 1.05]),
             timed(3, "passed", 0.99, [0.96, 1.02]), timed(4, "mismatch")]
    comparison = compare.compare(side(before), side(after))
    assert [move.kind for move in comparison.moves] == [compare.NOISE] * 3 + [compare.UNCHANGED]
    assert comparison.listed() == [] and not comparison.regressed
    assert len(comparison.listed(noise=True)) == 3
    assert compare.line(comparison.moves[0]) == (
        "r1 level1/1 s0: within noise: inconclusive -> slower, "
        "speedup 1.001 [0.970, 1.030] -> 0.842 [0.700, 1.010] (-15.9%)")


@pytest.mark.parametrize(("was", "now", "device", "kind"), [
    # intervals apart, and a move well beyond the device's run-to-run spread
    ((1.50, [1.45, 1.55]), (1.20, [1.16, 1.24]), "cuda:0", compare.SLOWER),
    ((1.00, [0.99, 1.01]), (1.05, [1.04, 1.06]), "cuda:0", compare.FASTER),
    # apart, but within what identical code reads between runs on that device
    ((1.00, [0.99, 1.01]), (1.05, [1.04, 1.06]), "cpu", compare.UNCHANGED),
    ((1.00, [0.995, 1.005]), (1.02, [1.015, 1.025]), "cuda:0", compare.UNCHANGED),
    # moved by more than that, but the intervals overlap
    ((1.00, [0.90, 1.10]), (1.10, [1.00, 1.20]), "cuda:0", compare.NOISE),
    # no interval (the harness's clock): known to 25%
    ((1.00, None), (1.20, None), "cuda:0", compare.NOISE),
    ((1.00, None), (1.70, None), "cuda:0", compare.FASTER),
    # too few calls for an interval: known to 20%
    ((1.00, [0.0, math.inf]), (1.30, [0.0, math.inf]), "cuda:0", compare.NOISE),
    ((1.00, [0.0, math.inf]), (1.50, [0.0, math.inf]), "cuda:0", compare.FASTER),
])
def test_a_speedup_moved_only_with_its_intervals_apart_and_beyond_the_devices_spread(
        was, now, device, kind):
    assert kinds([timed(1, "passed", *was)], [timed(1, "passed", *now)], device) == [kind]


def test_a_verdict_that_flips_with_the_speedup_beyond_noise_is_listed_with_both_intervals():
    comparison = compare.compare(side([timed(1, "passed", 1.30, [1.25, 1.35])]),
                                 side([timed(1, "slower", 0.80, [0.78, 0.82])]))
    assert [compare.line(move) for move in comparison.listed()] == [
        "r1 level1/1 s0: slower beyond noise: passed -> slower, "
        "speedup 1.300 [1.250, 1.350] -> 0.800 [0.780, 0.820] (-38.5%)"]
    assert not comparison.regressed  # still correct
    clock = compare.compare(side([timed(1, "passed", 1.0, None)]),
                            side([timed(1, "passed", 2.0, [0.0, math.inf])]))
    assert compare.line(clock.moves[0]) == (
        "r1 level1/1 s0: faster beyond noise: speedup 1.000 (±25%, the harness's clock) -> "
        "2.000 (±20%, too few calls for an interval) (+100.0%)")


def test_a_change_of_correctness_is_never_noise_and_only_losing_it_is_a_regression():
    before = [timed(1, "passed", 1.0, [0.9, 1.1]), timed(2, "mismatch"), timed(3, "mismatch"),
              timed(4, "passed", 1.0, [0.9, 1.1])]
    after = [timed(1, "mismatch", error="worst element ..."), timed(2, "passed", 1.0, [0.9, 1.1]),
             timed(3, "runtime_error", error="RuntimeError: bad grid"),
             timed(4, "torch_only", 1.0, [0.9, 1.1])]
    comparison = compare.compare(side(before), side(after))
    assert [move.kind for move in comparison.moves] == [
        compare.NOW_FAILS, compare.NOW_PASSES, compare.RESTATUS, compare.RESTATUS]
    assert comparison.regressed
    assert [compare.line(move) for move in comparison.listed()] == [
        "r1 level1/1 s0: now fails (passed -> mismatch: worst element ...)",
        "r1 level1/2 s0: now passes (mismatch -> passed)",
        "r1 level1/3 s0: mismatch -> runtime_error (RuntimeError: bad grid)",
        "r1 level1/4 s0: passed -> torch_only"]


def test_the_header_names_both_runs_and_counts_each_kind_of_move():
    before = compare.Side.of(Path("reports/history/kernelbench/0003_20250107T101500Z.json"), {
        "environment": {"date": "2025-01-07T10:15:00Z", "commit": "1a2b3c4d5e6f", "gpu": "H200"},
        "config": {"device": "cuda:0"}, "complete": False, "cases_not_run": 2},
        [timed(1, "passed", 1.5, [1.45, 1.55]), timed(2, "passed", 1.0, [0.9, 1.1]),
         timed(9, "mismatch")])
    after = compare.Side.of(Path("after.json"), {"config": {"device": "cuda:0"}},
                            [timed(1, "passed", 1.2, [1.16, 1.24]), timed(2, "slower", 0.98,
                                                                         [0.9, 1.06])])
    assert compare.lines(compare.compare(before, after)) == [
        "before: run 3       reports/history/kernelbench/0003_20250107T101500Z.json; "
        "2025-01-07 10:15:00 UTC; commit 1a2b3c4d5e6f; cuda:0 H200; partial: 2 case(s) not run",
        "after:  after.json  cuda:0",
        "2 case(s) in both, 0 unchanged (1 only in run 3)",
        "beyond noise: now fails 0, now passes 0, faster 0, slower 1, other status change 0",
        "within noise 1: speedup intervals that overlap, or a move of 3% or less "
        "(identical code's spread between runs)",
        "r1 level1/1 s0: slower beyond noise: speedup 1.500 [1.450, 1.550] -> "
        "1.200 [1.160, 1.240] (-20.0%)"]


def test_a_run_that_does_not_say_its_device_is_read_with_the_widest_spread():
    assert compare.resolution([{}, {"config": {"device": "cuda:1"}}]) == 0.07
    assert compare.resolution([{"config": {"device": "cuda"}}]) == 0.03


# --- kernelbench-report compare over a history -------------------------------------------

def write_runs(root: Path, runs: list[list[dict]]) -> list[Path]:
    """The report and its history as that many runs would leave them, oldest first."""
    report = root / "reports" / "kernelbench.json"
    report.parent.mkdir(parents=True, exist_ok=True)
    kept = []
    for number, records in enumerate(runs):
        text = json.dumps({"config": {"device": "cuda:0"}, "results": records})
        report.write_text(text)
        when = datetime(2025, 1, 7, 10, tzinfo=timezone.utc) + timedelta(hours=number)
        kept.append(history.keep(report, text, when).path)
    return kept


RUNS = [[timed(1, "passed", 1.0, [0.99, 1.01]), timed(2, "passed", 1.0, [0.9, 1.1])],
        [timed(1, "passed", 1.5, [1.49, 1.51]), timed(2, "slower", 0.99, [0.9, 1.08])],
        [timed(1, "mismatch"), timed(2, "passed", 1.0, [0.9, 1.1])]]


def heads(out: str) -> list[str]:
    return [line.split()[2] for line in out.splitlines()[:2]]


def test_compare_with_no_run_named_compares_the_last_two_of_the_history(
        tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    kept = write_runs(tmp_path, RUNS)
    assert cli.main(["compare"]) == 0
    out = capsys.readouterr().out
    assert heads(out) == ["2", "3"]
    assert "r1 level1/1 s0: now fails (passed -> mismatch: mismatch ...)" in out
    assert out.endswith("1 move(s) within noise not listed (--all lists them)\n")
    assert cli.main(["compare", "--fail-on-regression"]) == 1
    capsys.readouterr()
    # One run named: against the latest; two: as named, by number or path (today's form).
    for argv, shown in [(["1"], ["1", "3"]), (["1", "2"], ["1", "2"]),
                        ([str(kept[0]), str(kept[1])], ["1", "2"]),
                        (["latest", "1"], ["3", "1"])]:
        assert cli.main(["compare", *argv]) == 0
        assert heads(capsys.readouterr().out) == shown, argv
    assert cli.main(["compare", "1", "2", "--all"]) == 0
    out = capsys.readouterr().out
    assert "r1 level1/1 s0: faster beyond noise: speedup 1.000 [0.990, 1.010] -> " \
        "1.500 [1.490, 1.510] (+50.0%)" in out
    assert "r1 level1/2 s0: within noise: passed -> slower" in out


def test_compare_reads_the_history_of_the_report_or_folder_it_is_given(tmp_path, capsys):
    write_runs(tmp_path, RUNS[:2])
    for given in (tmp_path / "reports" / "kernelbench.json",
                  tmp_path / "reports" / "history" / "kernelbench"):
        assert cli.main(["compare", "--history", str(given)]) == 0
        assert heads(capsys.readouterr().out) == ["1", "2"]


def test_compare_without_two_runs_to_compare_says_so_in_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    write_runs(tmp_path, RUNS[:1])
    assert cli.main(["compare"]) == 2
    err = capsys.readouterr().err
    assert err == ("kernelbench-report: compare: no two runs to compare in "
                   "reports/history/kernelbench (it holds run 1): name them (compare BEFORE "
                   "AFTER), or the history (--history)\n")
    assert cli.main(["compare", "4"]) == 2
    assert capsys.readouterr().err == ("kernelbench-report: compare: no run 4 in "
                                       "reports/history/kernelbench (it holds run 1)\n")
