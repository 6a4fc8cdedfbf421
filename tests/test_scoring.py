from __future__ import annotations

import math

import pytest

from pytest_kernelbench import scoring


def record(problem_id, correct=True, speedup=None, sample="s0", level=1, set_name="r1",
           status=None, compiled=True):
    return {"candidate_set": set_name, "level": level, "problem_id": problem_id,
            "sample": sample, "compiled": compiled, "correct": correct, "speedup": speedup,
            "status": status or ("passed" if correct else "mismatch")}


RECORDS = [
    record(1, speedup=2.0),
    record(2, speedup=0.5),
    record(3, correct=False),
    record(4, correct=False, compiled=False, status="missing", sample="missing"),
]


@pytest.mark.parametrize(("p", "expected"), [(0.0, 2 / 4), (1.0, 1 / 4), (2.0, 0.0), (1.99, 1 / 4)])
def test_fast_p_counts_correct_and_strictly_faster_over_all_problems(p, expected):
    assert scoring.fast_p(RECORDS, p) == pytest.approx(expected)


def test_an_incorrect_sample_never_counts_however_fast():
    assert scoring.fast_p([record(1, correct=False, speedup=50.0)], 0.0) == 0.0


def test_the_best_of_several_samples_counts_once():
    samples = [record(1, speedup=0.8, sample="s0"), record(1, speedup=1.5, sample="s1")]
    assert scoring.fast_p(samples, 1.0) == 1.0
    row, = scoring.summarize(samples, [1.0])
    assert (row.problems, row.correct) == (1, 1)
    assert row.geomean_speedup == pytest.approx(1.5)


def test_geomean_ignores_missing_values():
    assert scoring.geomean([2.0, 8.0, None]) == pytest.approx(4.0)
    assert scoring.geomean([]) is None


def test_summary_rows_follow_sets_then_levels():
    records = RECORDS + [record(1, speedup=1.2, level=2), record(1, speedup=3.0, set_name="r0")]
    rows = scoring.summarize(records, [0.0, 1.0])
    assert [(r.candidate_set, r.level) for r in rows] == [("r1", 1), ("r1", 2), ("r0", 1)]
    first = rows[0]
    assert (first.problems, first.missing, first.compiled, first.correct) == (4, 1, 3, 2)
    assert first.fast == {0.0: 0.5, 1.0: 0.25}
    assert first.geomean_speedup == pytest.approx(math.sqrt(2.0 * 0.5))
