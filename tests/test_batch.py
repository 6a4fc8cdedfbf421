"""Many attempts at once through the API (engine/batch.py): futures, records in the order
they settle, a bounded number in flight, cancellation, closing, and a crash that costs only
its own record. Judge processes are real processes; the device is the CPU."""

from __future__ import annotations

import os
import threading
import time
from dataclasses import astuple
from pathlib import Path
from types import SimpleNamespace

import pytest
from attempts import ABORTS, SLOW

from pytest_kernelbench import Session
from pytest_kernelbench.engine.batch import Batch, Counts

EXAMPLES = Path(__file__).parent / "examples"
RELU = EXAMPLES / "problems" / "level1" / "2_ReLU.py"
GOOD = EXAMPLES / "candidates" / "good" / "level1" / "2_ReLU.py"
WRONG = EXAMPLES / "candidates" / "broken" / "level1" / "2_ReLU" / "wrong_values.py"
FAST = {"device": "cpu", "trials": 2, "time_budget_s": 0.05, "p": 0.0}
# the candidates below write a marker file, which a confined candidate may not
OPEN = {**FAST, "confine": "off"}



def descendants(pid: int) -> set[int]:
    """Every live process below pid, read from /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rpartition(")")[2].split()
        if fields[0] != "Z":
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, stack = set(), [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            found.add(child)
            stack.append(child)
    return found


def test_a_submitted_attempt_gets_the_record_evaluate_gives(correct_and_timed):
    with Session(**FAST) as session:
        alone = session.evaluate(RELU, WRONG)
        future = session.submit(RELU, WRONG)
        good = session.submit(RELU, GOOD).result(timeout=300)
        batched = future.result(timeout=300)
        assert session.counts().settled == 2
    assert batched["status"] == alone["status"] == "mismatch"
    assert batched["verdicts"] == alone["verdicts"]
    correct_and_timed(good)
    assert good["placement"]["worker"] == "judge0"


def test_records_come_in_the_order_they_settle(tmp_path):
    slow = SLOW.format(marker=str(tmp_path / "slow"), seconds=0.5)
    with Session(judges=2, **OPEN) as session:
        order = [index for index, record in
                 session.evaluate_many([(RELU, slow), (RELU, WRONG), (RELU, WRONG)])]
    assert sorted(order) == [0, 1, 2]
    assert order[-1] == 0  # the slow one, submitted first, settles last


def test_a_crashing_attempt_costs_only_its_own_record():
    with Session(judges=1, **FAST) as session:
        records = dict(session.evaluate_many([(RELU, ABORTS), (RELU, WRONG), (RELU, ABORTS),
                                              (RELU, WRONG)]))
    assert [records[i]["status"] for i in range(4)] == ["crashed", "mismatch", "crashed",
                                                        "mismatch"]


def test_submit_blocks_while_in_flight_attempts_are_unsettled(tmp_path):
    slow = SLOW.format(marker=str(tmp_path / "slow"), seconds=0.3)
    with Session(judges=1, in_flight=1, **OPEN) as session:
        first = session.submit(RELU, slow)
        session.submit(RELU, WRONG).result(timeout=300)  # returned only once the first settled
        assert first.done()


def test_a_cancelled_attempt_is_never_judged(tmp_path):
    marker = tmp_path / "cancelled"
    with Session(judges=1, **OPEN) as session:
        first = session.submit(RELU, SLOW.format(marker=str(tmp_path / "slow"), seconds=0.3))
        waiting = session.submit(RELU, SLOW.format(marker=str(marker), seconds=0))
        assert waiting.cancel()
        first.result(timeout=300)
        session.submit(RELU, WRONG).result(timeout=300)  # the judge went on past it
        assert waiting.cancelled()
    assert not marker.exists()


def test_closing_settles_every_attempt_left_as_not_run_and_leaves_no_process(tmp_path):
    before = descendants(os.getpid())
    session = Session(judges=1, **OPEN)
    running = session.submit(RELU, SLOW.format(marker=str(tmp_path / "slow"), seconds=30))
    queued = [session.submit(RELU, WRONG) for _ in range(3)]
    deadline = time.monotonic() + 120
    while session.counts().judging == 0:  # the slow one reached its judge
        assert time.monotonic() < deadline
        time.sleep(0.1)
    started = time.monotonic()
    session.close()
    assert time.monotonic() - started < 30  # not the slow attempt's 30 s a call
    for future in (running, *queued):
        record = future.result(timeout=0)
        assert record["status"] == "not_run", record["error"]
        assert "closed" in record["error"]
    deadline = time.monotonic() + 10
    while descendants(os.getpid()) - before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert descendants(os.getpid()) - before == set()


def test_a_judge_killed_from_outside_costs_only_the_attempt_it_judged(tmp_path):
    with Session(judges=1, **OPEN) as session:
        running = session.submit(RELU, SLOW.format(marker=str(tmp_path / "slow"), seconds=30))
        deadline = time.monotonic() + 120
        while session.counts().judging == 0:
            assert time.monotonic() < deadline
            time.sleep(0.1)
        [judge] = session._batch._judges  # type: ignore[union-attr]
        judge.process.kill()
        record = running.result(timeout=60)
        after = session.submit(RELU, WRONG).result(timeout=300)
    assert record["status"] == "not_run" and "exit code -9" in record["error"]
    assert after["status"] == "mismatch"


def test_a_missing_file_is_named_before_any_attempt_starts(tmp_path):
    with Session(**FAST) as session:
        with pytest.raises(FileNotFoundError, match="candidate: no such file: .*absent.py"):
            list(session.evaluate_many([(RELU, WRONG), (RELU, tmp_path / "absent.py")]))
        assert session.counts().settled == 0 and session._batch is None


def test_progress_events_of_batched_attempts_reach_the_callback():
    events = []
    lock = threading.Lock()

    def heard(event):
        with lock:
            events.append(event)

    with Session(on_progress=heard, **FAST) as session:
        session.submit(RELU, WRONG).result(timeout=300)
    assert [(e.stage, e.state) for e in events if e.state != "running"][:2] == \
        [("compile", "started"), ("compile", "finished")]


def test_the_counts_of_a_batch_reach_their_callback_each_time_they_move():
    heard: list[Counts] = []
    with Session(on_counts=heard.append, **FAST) as session:
        records = dict(session.evaluate_many([(RELU, WRONG), (RELU, WRONG)]))
        assert len(records) == 2
    assert heard[-1] == Counts(0, 0, 0, 2)
    assert all(a != b for a, b in zip(heard, heard[1:]))  # only moves are told
    assert all(sum(astuple(c)) <= 2 for c in heard)  # never more than were submitted
    settled = [c.settled for c in heard]
    assert settled == sorted(settled) and any(c.judging for c in heard)


CPP_RELU = EXAMPLES / "candidates" / "cpp_ext" / "level1" / "2_ReLU.py"


def test_an_attempt_that_builds_is_built_ahead_and_judged_as_evaluate_judges_it(
        tmp_path, torch_headers, correct_and_timed):
    cache = tmp_path / "cache"
    torch_headers.link_into(cache)
    source = CPP_RELU.read_text().replace("kb_test_cpu_relu", "kb_test_batch_relu")
    heard = []
    with Session(build_cache=cache, on_counts=heard.append, **FAST) as session:
        batched = session.submit(RELU, source).result(timeout=600)
        alone = session.evaluate(RELU, source)  # its build now cached
    correct_and_timed(batched)
    assert batched["verdicts"] == alone["verdicts"]
    assert (batched["extension"], alone["extension"]) == ("built", "cached")
    # The batch's counts followed it through its build and its judging.
    assert Counts(0, 1, 0, 0) in heard and Counts(0, 0, 1, 0) in heard
    assert heard[-1] == Counts(0, 0, 0, 1)


class RemoteBuildStandIn:
    """A build made on a cluster's node, as the dispatcher sees it."""

    def __init__(self, node_id):
        self.status, self.node_id = "built", node_id

    def handed(self):
        return Path("/node/cache/abc"), {"status": "built"}

    def drop(self):
        pass


def test_a_judge_takes_the_attempt_built_on_its_node_first():
    here, there = RemoteBuildStandIn("node-a"), RemoteBuildStandIn("node-b")
    batch = SimpleNamespace(_ready=[7, 8, 9], _attempts={
        7: SimpleNamespace(build=None), 8: SimpleNamespace(build=there),
        9: SimpleNamespace(build=here)})
    judge_a = SimpleNamespace(node={"node_id": "node-a"})
    assert Batch._pick(batch, judge_a) == 2  # attempt 9, ahead of the older ones
    assert Batch._pick(batch, SimpleNamespace(node=None)) == 0  # a judge not placed yet
    assert Batch._entry(batch._attempts[9]) == here.handed()
    assert Batch._entry(batch._attempts[7]) is None
