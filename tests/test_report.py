"""The terminal summary's lines, as pure functions of the records."""

from __future__ import annotations

from pytest_kernelbench.reporting import report


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
