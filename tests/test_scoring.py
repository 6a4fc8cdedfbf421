from __future__ import annotations

import itertools
import math

import pytest

from pytest_kernelbench.judge import fast
from pytest_kernelbench.reporting import scoring


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


def test_a_speedup_counts_above_p_only_where_its_timing_shows_it():
    noisy = {**record(1, speedup=1.05), "speedup_margin": 0.2, "speedup_interval": [0, math.inf]}
    assert scoring.fast_p([noisy], 1.0) == 0.0 and scoring.fast_p([noisy], 0.8) == 1.0
    timed = {**noisy, "speedup_margin": 0.0, "speedup_interval": [1.02, 1.08]}
    assert scoring.fast_p([timed], 1.0) == 1.0 and scoring.fast_p([timed], 1.03) == 0.0
    assert scoring.fast_p([{**noisy, "speedup_margin": None}], 1.0) == 1.0  # older reports


def test_a_p_the_run_judged_is_read_from_the_record_and_another_p_by_the_same_rule():
    timed = {**record(1, speedup=1.3), "speedup_margin": 0.0, "speedup_interval": [1.1, 1.5]}
    judged = {**timed, "fast": fast.fast_map(timed, [0.0, 1.0])}
    assert judged["fast"] == {"0": True, "1": True}
    for p in (0.0, 1.0, 1.05, 1.2, 2.0):  # 1.05, 1.2 and 2 were not judged: the rule decides
        assert fast.is_fast(judged, p) is fast.fast_by_rule(timed, p)
    assert [fast.is_fast(judged, p) for p in (1.05, 1.2)] == [True, False]


@pytest.mark.parametrize("status", ["torch_only", "cheat", "runtime_error"])
def test_a_correct_record_whose_speed_item_failed_never_counts_as_fast(status):
    failed = {**record(1, speedup=3.0, status=status), "speedup_margin": 0.0,
              "speedup_interval": [2.5, 3.5]}
    assert scoring.fast_p([failed], 0.0) == 0.0


def test_the_upstream_table_counts_by_upstreams_rule_not_by_this_harness_interval():
    # Within this harness's noise of p (not fast here), but correct under upstream's rules with
    # a mean-of-times speedup above p: upstream counts it, at p the run did or did not judge.
    ours = {**record(1, speedup=1.05, status="inconclusive"), "speedup_margin": 0.0,
            "speedup_interval": [0.9, 1.2],
            "upstream": {"rules": "main", "compiled": True, "correct": True, "speedup": 1.08}}
    wrong_upstream = {**record(2, speedup=2.0), "speedup_margin": 0.0,
                      "speedup_interval": [1.9, 2.1],
                      "upstream": {"rules": "main", "compiled": True, "correct": False,
                                   "speedup": 2.0}}
    written = [{**r, "fast": fast.fast_map(r, [0.0, 1.0]),
                "upstream": {**r["upstream"], "fast": fast.upstream_fast_map(r["upstream"],
                                                                              [0.0, 1.0])}}
               for r in (ours, wrong_upstream)]
    for records in ([ours, wrong_upstream], written):
        [row] = scoring.summarize(records, [1.0, 1.07], p=1.0)
        [upstream_row] = scoring.summarize_upstream(records, [1.0, 1.07], p=1.0)
        assert row.fast == {1.0: 0.5, 1.07: 0.5}  # problem 2 alone
        assert upstream_row.fast == {1.0: 0.5, 1.07: 0.5}  # problem 1 alone
        assert upstream_row.correct == 1


def test_a_problem_whose_speedup_reads_above_p_without_its_timing_showing_it_is_counted_apart():
    # The main job on a CPU at p=0.9: 0.99 with no interval needs more than 0.9 * 1.2 to show.
    thin = {**record(1, speedup=0.99, status="inconclusive"), "speedup_margin": 0.2,
            "speedup_interval": [0.0, math.inf]}
    across = {**record(2, speedup=1.05, status="inconclusive"), "speedup_margin": 0.0,
              "speedup_interval": [0.95, 1.15]}
    shown = {**record(3, speedup=1.3), "speedup_margin": 0.0, "speedup_interval": [1.2, 1.4]}
    slower = {**record(4, speedup=0.5, status="slower"), "speedup_margin": 0.0,
              "speedup_interval": [0.45, 0.55]}
    cheat = {**record(5, speedup=3.0, status="cheat"), "speedup_margin": 0.0,
             "speedup_interval": [2.5, 3.5]}  # its speed item failed: no timing held it down
    best = [{**thin, "problem_id": 6}, {**shown, "problem_id": 6, "sample": "s1"}]
    records = [thin, across, shown, slower, cheat, record(7, correct=False), *best]
    [row] = scoring.summarize(records, [0.0, 0.9, 1.0])
    assert row.fast == {0.0: 5 / 7, 0.9: 3 / 7, 1.0: 2 / 7}
    # at 0.9 the interval 0.95-1.15 shows it; at 1 it holds p, and 0.99 is not above it
    assert row.unshown == {0.0: 0, 0.9: 1, 1.0: 1}
    assert scoring.unshown([slower, cheat, record(7, correct=False)], 0.4) == 0
    # upstream's rule is the speedup alone: nothing it has is held down by a timing
    [upstream_row] = scoring.summarize_upstream(
        [{**r, "upstream": {"rules": "v0", "compiled": True, "correct": r["correct"],
                            "speedup": r["speedup"]}} for r in records], [0.9, 1.0])
    assert upstream_row.unshown == {0.9: 0, 1.0: 0}


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


@pytest.mark.parametrize(("n", "c", "k"), [(5, 0, 1), (5, 2, 1), (5, 2, 3), (6, 3, 4), (4, 4, 2)])
def test_pass_at_k_is_the_chance_that_one_of_k_draws_succeeds(n, c, k):
    # By brute force: every way to draw k of the n samples, successes being the first c.
    draws = list(itertools.combinations(range(n), k))
    expected = sum(any(i < c for i in draw) for draw in draws) / len(draws)
    assert scoring.pass_at_k(n, c, k) == pytest.approx(expected)


def test_pass_at_k_over_problems_counts_a_problem_without_candidates_as_failed():
    records = [record(1, speedup=2.0, sample="s0"), record(1, correct=False, sample="s1"),
               record(2, speedup=0.5, sample="s0"), record(2, speedup=0.5, sample="s1"),
               record(3, correct=False, sample="missing", status="missing", compiled=False)]
    [row] = scoring.summarize(records, [0.0, 1.0], p=1.0)
    assert row.pass_at_k == {1: pytest.approx((0.5 + 1.0 + 0.0) / 3)}
    assert row.fast_at_k == {1: pytest.approx((0.5 + 0.0 + 0.0) / 3)}
    single = scoring.summarize([record(1, speedup=2.0)], [1.0], p=1.0)
    assert single[0].pass_at_k == {}  # one sample per problem: fast_p says it all


def test_the_summary_table_and_its_notes_fit_in_a_hundred_columns():
    from pytest_kernelbench.reporting import report

    rows = [scoring.SetSummary("reference", level, 250, 0, 250, 250, {0.0: 1.0, 1.0: 0.333,
                                                                      2.0: 0.125}, 10.959,
                               unshown={1.0: 12, 2.0: 3})  # marked cells: no wider
            for level in (1, 2, 3)]
    for ps in ([0.0, 1.0], [0.0, 1.0, 2.0]):
        table = report.render_table(rows, ps).splitlines()
        assert table[0].split("|")[1].strip() == "set" and "geomean" in table[0]
        assert max(map(len, table)) <= report.SUMMARY_WIDTH, table[0]
    note = ("note: 10 of 12 speedups rest on 3 timed call(s) a side, too few for an interval: "
            "readings off 1.0 there may be noise (more with --benchmark-max-time or "
            "--benchmark-min-rounds)")
    lines = report.wrapped([note])
    assert len(lines) == 2 and all(len(line) <= report.SUMMARY_WIDTH for line in lines)
    assert lines[1].startswith("  ") and " ".join(p.strip() for p in lines) == note
