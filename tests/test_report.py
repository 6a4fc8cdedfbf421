"""The terminal summary's lines, as pure functions of the records."""

from __future__ import annotations

from pytest_kernelbench import report


def test_speed_items_that_neither_passed_nor_failed_are_counted_in_one_line():
    records = [{"status": "slower", "flags": ["inconclusive: not shown to be at or below p=1"]},
               {"status": "inconclusive", "flags": ["inconclusive: reported speedup 1.800"]},
               {"status": "slower", "flags": []}, {"status": "passed"}]
    [line] = report.inconclusive_lines(records)
    assert line.startswith("inconclusive: 2 speed item(s) skipped")
    assert report.inconclusive_lines(records[2:]) == []
