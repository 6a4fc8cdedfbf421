"""Progress while a run runs: the estimate, the lines, and what a run and the API say."""

from __future__ import annotations

import io
import logging
from pathlib import Path

import pytest

from pytest_kernelbench import evaluate
from pytest_kernelbench.plugin import live
from pytest_kernelbench.reporting import heartbeat
from pytest_kernelbench.reporting.heartbeat import Board, Running, Snapshot

EXAMPLES = Path(__file__).parent / "examples"
RELU = EXAMPLES / "problems" / "level1" / "2_ReLU.py"
GOOD = EXAMPLES / "candidates" / "good" / "level1" / "2_ReLU.py"
HANGS = "level1/2_ReLU[[]broken-hangs_at_import[]]"


@pytest.mark.parametrize(("expected", "longest", "pace", "parallel", "left"), [
    (30.0, 10.0, 1.0, 1, 30.0),  # the expected costs, as they are
    (30.0, 10.0, 2.0, 1, 60.0),  # finished cases took twice what they were expected to
    (30.0, 10.0, 1.0, 3, 10.0),  # three at once
    (30.0, 20.0, 1.0, 3, 20.0),  # but never less than the longest case left
    (0.0, 0.0, 5.0, 8, 0.0),  # all done
])
def test_what_is_left_is_the_expected_work_at_the_pace_of_finished_cases(expected, longest,
                                                                         pace, parallel, left):
    assert heartbeat.left_s(expected, longest, pace, parallel) == left


@pytest.mark.parametrize(("seconds", "shown"), [
    (0.2, "0 s"), (42.4, "42 s"), (59.6, "1m00s"), (185, "3m05s"), (3720, "1h02m"), (-1, "0 s"),
])
def test_durations_read_at_a_glance(seconds, shown):
    assert heartbeat.duration(seconds) == shown


def test_an_item_names_its_case_and_stage():
    assert heartbeat.split_item("level1/19_ReLU::test_correct[r1-s0]") == \
        ("level1/19_ReLU[r1-s0]", "correct")


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def items(case: str) -> list[str]:
    path, _, params = case.partition("[")
    return [f"{path}::test_{stage}[{params}" for stage in ("compile", "correct", "speed")]


def test_the_board_counts_cases_and_says_what_runs_and_for_how_long():
    clock = Clock()
    scale, relu = "level1/1_Scale[a-s0]", "level1/2_ReLU[a-s0]"
    board = Board([*items(scale), *items(relu)], clock=clock)
    assert board.snapshot().left_s == 2.0  # before anything ran: the guesses, 1 s a case
    clock.now += 60  # a first minute spent starting workers is not read as the cases' pace
    for item in items(scale):
        board.started(item)
        clock.now += 10
        board.finished(item)
    board.started(items(relu)[0])
    clock.now += 5
    snapshot = board.snapshot()
    assert (snapshot.cases_done, snapshot.cases_total, snapshot.elapsed_s) == (1, 2, 95.0)
    assert snapshot.running == (Running(relu, "compile", 5.0),)
    assert snapshot.left_s == 30.0  # the case that finished took 30 s
    board.finished(items(relu)[0])
    assert board.snapshot().running == ()
    assert board.snapshot().left_s == pytest.approx(20.0)  # two of its three items left


def test_a_case_an_earlier_report_found_long_weighs_more_in_the_estimate():
    clock = Clock()
    short, long = "level1/1_Scale[a-s0]", "level3/1_MLP[a-s0]"
    board = Board([*items(short), *items(long)], {short: 1.0, long: 9.0}, clock=clock)
    assert board.snapshot().left_s == 10.0  # from the start: what the report says they cost
    for item in items(short):
        board.started(item)
        clock.now += 1
        board.finished(item)
    assert board.snapshot().left_s == 27.0  # the short one took 3x its cost: so will the long


def test_cases_running_at_once_share_what_is_left_down_to_the_longest():
    clock = Clock()
    cases = [f"level1/{n}_Op[a-s0]" for n in range(1, 9)]
    board = Board([item for case in cases for item in items(case)],
                  {case: 4.0 for case in cases}, clock=clock)
    for case in cases[:4]:  # four workers, each on a case
        board.started(items(case)[0])
    assert board.snapshot().left_s == 8.0  # 32 s of work over four
    for item in [item for case in cases[:7] for item in items(case)]:
        board.finished(item)
    assert board.snapshot().left_s == 4.0  # one case left: it takes what it takes


def test_the_live_line_puts_what_runs_last_and_fits_the_terminal():
    snapshot = Snapshot(100.0, 2, 6, (Running("level1/19_ReLU[r1-s0]", "correct", 12.0),
                                      Running("level1/1_Scale[r1-s0]", "speed", 3.0)), 300.0)
    text = heartbeat.live_text(snapshot)
    assert text == ("kernelbench: 2/6 cases, 1m40s elapsed, ~5m00s left | "
                    "level1/19_ReLU[r1-s0] correct 12 s, level1/1_Scale[r1-s0] speed 3 s")
    assert heartbeat.live_text(snapshot, 40) == text[:37] + "..."
    assert heartbeat.heartbeat_text(snapshot) == (
        "kernelbench: running level1/19_ReLU[r1-s0] correct for 12 s, level1/1_Scale[r1-s0] "
        "speed for 3 s; 2/6 cases done, 1m40s elapsed, ~5m00s left")
    no_estimate = Snapshot(5.0, 0, 6, (), None)
    assert heartbeat.live_text(no_estimate) == "kernelbench: 0/6 cases, 5 s elapsed"


class Writer:
    """The terminal writer's part that the live line reads."""

    def __init__(self, column: int, width: int = 80):
        self.width_of_current_line, self.fullwidth = column, width

    def flush(self) -> None:
        pass


class Config:
    def __init__(self, writer: Writer):
        self.writer = writer

    def get_terminal_writer(self) -> Writer:
        return self.writer


def test_the_live_line_is_drawn_under_pytests_line_and_erased_back_to_where_pytest_was():
    stream = io.StringIO()
    shown = live.LiveProgress(Config(Writer(column=17)), 30.0, stream=stream,  # type: ignore[arg-type]
                              tty=True)
    shown.board.started("level1/1_Scale::test_speed[a-s0]")
    shown.tick()
    drawn = stream.getvalue()
    assert drawn.startswith("\n\x1b[2Kkernelbench: 0/1 cases, ")
    assert drawn.endswith("| level1/1_Scale[a-s0] speed 0 s\x1b[1A\r\x1b[17C")
    shown.pause()  # pytest is about to write: the line goes, the cursor stays where it was
    assert stream.getvalue()[len(drawn):] == "\n\x1b[2K\x1b[1A\r\x1b[17C"
    shown.pause()
    shown.tick()  # nothing drawn while pytest writes
    assert stream.getvalue().count("kernelbench") == 1


def test_a_heartbeat_line_takes_a_line_of_its_own_after_pytests_dots():
    stream = io.StringIO()
    shown = live.LiveProgress(Config(Writer(column=17)), 0.0, stream=stream,  # type: ignore[arg-type]
                              tty=False)
    shown.board.started("level1/1_Scale::test_speed[a-s0]")
    shown.tick()
    shown.tick()  # pytest wrote nothing since: no empty line between two heartbeats
    lines = stream.getvalue().split("\n")
    assert lines[0] == "" and lines[1].startswith("kernelbench: running level1/1_Scale[a-s0] "
                                                  "speed for 0 s; 0/1 cases done")
    assert lines[2].startswith("kernelbench: running") and lines[3] == ""


# --- runs ---------------------------------------------------------------------------------

def hanging(kb, *args: str):
    """A run whose one case hangs in its compile stage until --kb-timeout ends it."""
    return kb.run("broken", args=("--kb-level=1", "-k", "hangs_at_import", "--kb-timeout=2",
                                  "--kb-trials=1", *args))


def test_a_run_whose_output_is_no_terminal_says_what_runs_every_heartbeat(kb):
    result = hanging(kb, "--kb-heartbeat=0.2")
    result.assert_outcomes(failed=1, skipped=2)
    beats = [line for line in result.stdout.lines if line.startswith("kernelbench: running")]
    assert len(beats) >= 3, result.stdout.str()
    result.stdout.fnmatch_lines([f"kernelbench: running {HANGS} compile for * s; 0/1 cases done,"
                                 " * s elapsed*"])


def test_the_heartbeat_interval_is_an_ini_option_too(kb):
    kb.pytester.makeini("[pytest]\nkb_heartbeat = 0.2\n")
    result = hanging(kb)
    result.stdout.fnmatch_lines([f"kernelbench: running {HANGS} compile for *"])


def test_under_xdist_the_controller_says_what_its_workers_run(kb):
    kb.plugin_args += ["-p", "xdist.plugin"]
    result = hanging(kb, "-n", "2", "--kb-heartbeat=0.2")
    result.assert_outcomes(failed=1, skipped=2)
    result.stdout.fnmatch_lines([f"kernelbench: running {HANGS} compile for *"])


def test_a_run_told_to_be_silent_says_nothing_of_its_progress(kb):
    result = hanging(kb, "--kb-heartbeat=0.2", "-q", "-q")
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # the hanging case timed out
    assert "kernelbench:" not in result.stdout.str()  # neither the heartbeat nor the summary


def test_the_api_logs_each_stage_and_calls_back_while_it_runs(caplog, correct_and_timed):
    events: list[heartbeat.Event] = []
    with caplog.at_level(logging.INFO, logger="pytest_kernelbench"):
        record = evaluate(RELU, GOOD, device="cpu", trials=2, time_budget_s=0.05, p=0.0,
                          heartbeat_s=0.05, on_progress=events.append)
    correct_and_timed(record)
    said = [(event.stage, event.state) for event in events if event.state != "running"]
    assert said == [(stage, state) for stage in ("compile", "correct", "speed")
                    for state in ("started", "finished")]
    assert {event.status for event in events if event.state == "finished"} == {"passed"}
    running = [event for event in events if event.state == "running"]
    assert running and all(event.elapsed_s > 0 for event in running)
    assert events[0].case == "level1/2_ReLU[api-a1]"
    messages = [r.getMessage() for r in caplog.records if r.name == "pytest_kernelbench"]
    assert "kernelbench: level1/2_ReLU[api-a1] compile: started" in messages
    assert any(m.startswith("kernelbench: level1/2_ReLU[api-a1] compile: still running after")
               for m in messages)
    assert any(m.startswith("kernelbench: level1/2_ReLU[api-a1] speed: passed after")
               for m in messages)


def test_the_progress_core_needs_no_pytest():
    import subprocess
    import sys

    # Loaded alone, from its file: what the API says of its progress does not import pytest.
    code = ("import importlib.util, sys; "
            f"spec = importlib.util.spec_from_file_location('heartbeat', {heartbeat.__file__!r}); "
            "module = sys.modules['heartbeat'] = importlib.util.module_from_spec(spec); "
            "spec.loader.exec_module(module); "
            "sys.exit('pytest' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
