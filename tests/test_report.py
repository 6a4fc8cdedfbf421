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


def test_feedback_on_a_pass_at_p_0_without_a_settled_time_says_so():
    from pytest_kernelbench.reporting import feedback

    record = {"level": 1, "problem_id": 19, "problem": "ReLU", "candidate_set": "mine",
              "sample": "s0", "compiled": True, "correct": True, "status": "passed",
              "speedup": None, "flags": ["reported speedup 1.100; ... (a busy host) ..."]}
    info = feedback.feedback(record, p=0.0)
    assert info["stage_reached"] == "speed"  # its speed item passed
    text = feedback.render(info)
    assert "correct; no speedup" in text and "at p = 0 any time counts" in text


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


def failed(problem_id, status, error):
    """A record of a case that no stage passed through to a timing."""
    return {"candidate_set": "mine", "level": 1, "problem_id": problem_id,
            "problem": f"P{problem_id}", "sample": "s0", "compiled": status != "syntax_error",
            "correct": False, "status": status, "speedup": None, "error": error}


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


def test_the_case_list_shows_the_fastest_and_slowest_timed_cases_and_every_failure():
    speeds = [timed(n, speed) for n, speed in enumerate([1.2, 0.8, 1.0, 0.9, 1.1, 0.7], 1)]
    speeds[0] = timed(1, 1.2, status="passed", interval=[1.1, 1.3])
    speeds[4] = {**timed(5, 1.1), "speedup_interval": None}  # a speedup the harness's clock set
    unsettled = timed(7, None)  # the harness's clock could not settle the time: last
    failures = [failed(9, "syntax_error", "SyntaxError: expected ':' (9.py, line 4)"),
                failed(8, "crashed", "trial 0: worker process ended (killed by SIGSEGV) " * 9),
                failed(10, "unsupported_device", "CUDA-only candidate: needs a CUDA device")]
    apart = [failed(11, "missing", None), failed(12, "not_run", "the run stopped"),
             failed(13, "problem_error", "the problem's file does not load")]
    records = [*speeds, unsettled, *failures, *apart]
    lines = report.case_lines(records, shown=2)
    assert lines[:6] == [
        "timed: 7 case(s), fastest first (speedup, 95% interval, verdict)",
        "    1.200x  1.100-1.300  passed        level1/1_P1[reference-s0]",
        "    1.100x  -            inconclusive  level1/5_P5[reference-s0]",
        "  ... 3 more (--kb-cases=all lists every case)",
        "    0.700x  -            inconclusive  level1/6_P6[reference-s0]",
        "         -  -            inconclusive  level1/7_P7[reference-s0]"]
    assert lines[6:9] == [
        "failed: 3 case(s) (status, case: why)",
        "  crashed             level1/8_P8[mine-s0]: trial 0: worker process ended (killed by "
        "SIGSEGV) trial…",  # cut to the summary's width
        "  syntax_error        level1/9_P9[mine-s0]: SyntaxError: expected ':' (9.py, line 4)"]
    assert lines[9].startswith("  unsupported_device  level1/10_P10[mine-s0]: CUDA-only")
    assert len(lines) == 10 and all(len(line) <= report.SUMMARY_WIDTH for line in lines)
    every = report.case_lines(records, shown=None)
    assert len(every) == 1 + 7 + 1 + 3 and "more" not in "".join(every)
    assert every[1:8] == sorted(every[1:8], key=lambda line: -float(
        line.split()[0].rstrip("x").replace("-", "0")))
    assert report.case_lines(records, shown=0)[0].startswith("failed: 3 case(s)")
    assert report.case_lines(records, shown=4)[1:8] == every[1:8]  # 7 fit in 4 + 4


def test_cases_only_upstreams_rules_pass_without_their_speedup_are_counted_as_the_run_had_them():
    only_upstream = {"correct": False, "upstream": {"correct": True, "speedup": None}}
    timed = {"correct": False, "upstream": {"correct": True, "speedup": 1.3}}
    ours = {"correct": True, "upstream": {"correct": True, "speedup": None}}
    records = [only_upstream, timed, ours]
    [off] = report.untimed_upstream_lines(records)
    assert off.startswith("not timed: 1 case(s)") and "--kb-upstream-timing=on" in off
    # Asked for, a timing that gave no figure is not one the option would have made.
    [on] = report.untimed_upstream_lines(records, timed=True)
    assert on.startswith("no speedup: 1 case(s)") and "--kb-upstream-timing" not in on
    assert report.untimed_upstream_lines([timed, ours], timed=True) == []
