"""The terminal summary's lines, as pure functions of the records."""

from __future__ import annotations

import math

from pytest_kernelbench.reporting import report, scoring


def test_speed_items_that_neither_passed_nor_failed_are_counted_in_one_line():
    records = [{"status": "inconclusive", "flags": ["inconclusive: not shown to be at or below p=1"]},
               {"status": "inconclusive", "flags": ["inconclusive: reported speedup 1.800"]},
               {"status": "slower", "flags": []}, {"status": "passed"}]
    [line] = report.inconclusive_lines(records)
    assert line.startswith("inconclusive: 2 speed item(s) skipped")
    assert report.inconclusive_lines(records[2:]) == []


def test_feedback_on_a_time_the_harness_could_not_settle_says_it_is_correct():
    from pytest_kernelbench.reporting import feedback

    text = feedback.render({"problem": "level1/19_ReLU", "candidate_set": "mine", "sample": "s0",
                            "status": "inconclusive", "flags": []})
    assert "correct; no speedup" in text and "failed" not in text


def test_feedback_on_a_speedup_too_close_to_p_says_it_is_correct_and_undecided():
    from pytest_kernelbench.reporting import feedback

    text = feedback.render({"problem": "level1/19_ReLU", "candidate_set": "mine", "sample": "s0",
                            "status": "inconclusive", "flags": [], "speedup": 1.04, "p": 1.0})
    assert "correct; speedup 1.040x" in text and "too close to p = 1" in text
    assert "failed" not in text


def timed(problem_id, speedup, status="inconclusive", interval=None, level=1, sample="s0"):
    """A record of the reference set whose speed item timed it: no interval unless given."""
    return {"candidate_set": "reference", "level": level, "problem_id": problem_id,
            "problem": f"P{problem_id}", "sample": sample, "compiled": True, "correct": True,
            "status": status, "speedup": speedup, "speedup_margin": 0.0 if interval else 0.2,
            "speedup_interval": interval or [0.0, math.inf], "error": None}


def test_a_fast_p_cell_held_down_by_speedups_its_timing_does_not_show_is_marked_and_explained():
    # The main job on a CPU, read at p=0.9: every speedup at least 0.987, none with an interval.
    records = [timed(1, 0.987), timed(2, 1.01), timed(3, 0.99),
               timed(4, 1.02, level=2), timed(5, 0.95, status="passed", interval=[0.93, 0.97],
                                             level=2)]
    ps = [0.0, 0.9, 1.0]
    rows = scoring.summarize(records, ps, p=1.0)
    table = report.render_table(rows, ps).splitlines()
    cells = [[cell.strip() for cell in line.split("|")[7:10]] for line in table[2:]]
    assert cells == [["1.000", "0.000*", "0.000*"], ["1.000", "0.500*", "0.000*"]]
    assert report.unshown_lines(rows, ps) == [
        "*fast_0.9: 4 correct problem(s) read a speedup above 0.9 that their timing does not show "
        "(no interval and too small a lead, or an interval that holds 0.9), so count as not fast: "
        "3 in reference level1, 1 in reference level2",
        "*fast_1: 2 correct problem(s) read a speedup above 1 that their timing does not show "
        "(no interval and too small a lead, or an interval that holds 1), so count as not fast: "
        "1 in reference level1, 1 in reference level2"]
    shown = [timed(1, 1.3, status="passed", interval=[1.2, 1.4])]
    rows = scoring.summarize(shown, ps, p=1.0)
    assert "*" not in report.render_table(rows, ps) and report.unshown_lines(rows, ps) == []
