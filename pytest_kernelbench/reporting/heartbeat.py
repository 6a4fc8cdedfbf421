"""Word of what a run is doing while it does it. Nothing here knows pytest.

A stage can run for minutes (a correctness stage of a large problem on a CPU, a candidate that
hangs until --kb-timeout) with nothing else to say meanwhile. A `Board` keeps which items a
run has, which ran and which run now; from it come the live line a terminal shows (live.py
draws it) and the heartbeat line a log gets while something runs. The Python API says the same
through `logging` (the `pytest_kernelbench` logger) and an optional callback (`watch`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass

logger = logging.getLogger("pytest_kernelbench")
REDRAW_S = 1.0  # how often a terminal's live line is drawn again (its clocks move)


def left_s(expected_left_s: float, longest_left_s: float, pace: float,
           parallel: int) -> float:
    """Seconds still to go: the work left (in the seconds the cases are expected to cost) at the
    pace the finished cases took (seconds taken per second expected), spread over the cases
    that run at once, but never less than the longest case left, which no parallelism
    shortens."""
    return pace * max(expected_left_s / max(1, parallel), longest_left_s)


def duration(seconds: float) -> str:
    """'42 s', '3m05s', '1h02m': a short clock reading for a line that is read at a glance."""
    whole = max(0, round(seconds))
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


def split_item(nodeid: str) -> tuple[str, str]:
    """(case, stage) of an item: 'level1/19_ReLU::test_correct[r1-s0]' ->
    ('level1/19_ReLU[r1-s0]', 'correct')."""
    path, _, rest = nodeid.partition("::")
    name, bracket, params = rest.partition("[")
    return path + bracket + params, name.removeprefix("test_")


@dataclass(frozen=True)
class Running:
    case: str  # 'level1/19_ReLU[r1-s0]'
    stage: str  # 'compile', 'correct', 'speed'
    seconds: float  # since it started


@dataclass(frozen=True)
class Snapshot:
    """A run at one moment: what the live line and the heartbeat say."""

    elapsed_s: float
    cases_done: int
    cases_total: int
    running: tuple[Running, ...]
    left_s: float | None  # None: no estimate


class Board:
    """The items of a run, which finished and which run now, since when. The hooks write to it
    while another thread reads it, hence the lock.

    What is left is each case's expected cost (its weight: the seconds an earlier report says
    it costs, or schedule.expected_cost's guess) less its share of items done, from the first
    item on. Once cases finish, the seconds they took from their first item's start to their
    last item's end, over what they were expected to cost, set the pace for the rest: a run
    whose first minute went to starting workers is not read as slow, and a guess that was off
    is corrected by the cases that finished. Cases running at once (the most seen: xdist's
    workers) share what is left."""

    def __init__(self, nodeids: Iterable[str] = (), weights: Mapping[str, float] | None = None,
                 clock: Callable[[], float] = time.monotonic):
        self._clock = clock
        self._lock = threading.Lock()
        self.started_s = clock()
        self._weights = dict(weights or {})
        self._items: dict[str, set[str]] = {}  # case -> its items
        self._finished: set[str] = set()
        self._running: dict[str, float] = {}  # item -> when it started
        self._began: dict[str, float] = {}  # case -> when its first item started
        self._took: dict[str, float] = {}  # finished case -> seconds, first start to last end
        self._parallel = 1  # the most items seen running at once
        self.expect(nodeids)

    def expect(self, nodeids: Iterable[str]) -> None:
        """Items the run will run (more may be added as they start)."""
        with self._lock:
            for nodeid in nodeids:
                self._items.setdefault(split_item(nodeid)[0], set()).add(nodeid)

    def started(self, nodeid: str) -> None:
        with self._lock:
            case = split_item(nodeid)[0]
            self._items.setdefault(case, set()).add(nodeid)
            self._running[nodeid] = self._clock()
            self._began.setdefault(case, self._running[nodeid])
            self._parallel = max(self._parallel, len({split_item(n)[0] for n in self._running}))

    def finished(self, nodeid: str) -> None:
        with self._lock:
            case = split_item(nodeid)[0]
            items = self._items.setdefault(case, set())
            items.add(nodeid)
            self._running.pop(nodeid, None)
            self._finished.add(nodeid)
            if items <= self._finished and case in self._began:
                self._took[case] = self._clock() - self._began[case]

    def snapshot(self) -> Snapshot:
        with self._lock:
            now = self._clock()
            known = [self._weights[case] for case in self._items if case in self._weights]
            usual = sum(known) / len(known) if known else 1.0
            expected_left = longest_left = expected_took = took = 0.0
            cases_done = 0
            for case, items in self._items.items():
                weight = self._weights.get(case, usual)
                finished = len(items & self._finished)
                left = weight * (1 - finished / len(items))
                cases_done += finished == len(items)
                expected_left += left
                longest_left = max(longest_left, left)
                if case in self._took:
                    expected_took += weight
                    took += self._took[case]
            pace = took / expected_took if expected_took > 0 and took > 0 else 1.0
            running = tuple(Running(*split_item(nodeid), now - since) for nodeid, since
                            in sorted(self._running.items(), key=lambda item: item[1]))
            return Snapshot(now - self.started_s, cases_done, len(self._items), running,
                            left_s(expected_left, longest_left, pace, self._parallel))


def _pace(snapshot: Snapshot) -> str:
    left = "" if snapshot.left_s is None else f", ~{duration(snapshot.left_s)} left"
    return f"{duration(snapshot.elapsed_s)} elapsed{left}"


def live_text(snapshot: Snapshot, width: int = 0) -> str:
    """The live line, cut to width (0: whole): 'kernelbench: 2/6 cases, 1m40s elapsed, ~5m
    left | level1/19_ReLU[r1-s0] correct 12 s'. What runs comes last: with many workers it
    is what a narrow terminal cuts."""
    running = ", ".join(f"{r.case} {r.stage} {duration(r.seconds)}" for r in snapshot.running)
    text = (f"kernelbench: {snapshot.cases_done}/{snapshot.cases_total} cases, "
            f"{_pace(snapshot)}" + (f" | {running}" if running else ""))
    if width and len(text) > width:
        return text[:max(0, width - 3)] + "..."
    return text


def heartbeat_text(snapshot: Snapshot) -> str:
    """The heartbeat line a log gets: 'kernelbench: running level1/19_ReLU[r1-s0] correct for
    35 s; 2/6 cases done, 1m40s elapsed, ~5m left'."""
    running = ", ".join(f"{r.case} {r.stage} for {duration(r.seconds)}"
                        for r in snapshot.running) or "nothing"
    return (f"kernelbench: running {running}; {snapshot.cases_done}/{snapshot.cases_total} "
            f"cases done, {_pace(snapshot)}")


class Ticker:
    """Calls `tick` every `interval_s` on a thread of its own, until stopped."""

    def __init__(self, tick: Callable[[], None], interval_s: float, name: str = "kernelbench"):
        self._tick = tick
        self._interval_s = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> Ticker:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self._interval_s):
            try:
                self._tick()
            except Exception:  # a failing report of progress must not end the reports
                logger.exception("kernelbench: reporting progress failed")


# --- the Python API -------------------------------------------------------------------------

@dataclass(frozen=True)
class Event:
    """One word of progress from the Python API, as a callback receives it.

    state: 'started', 'running' (a heartbeat: the stage has run `elapsed_s` so far) or
    'finished' (with the stage's `status`, e.g. 'passed', 'mismatch', 'timeout')."""

    case: str  # 'level1/19_ReLU[api-a1]'
    stage: str  # 'compile', 'correct' or 'speed'
    state: str
    elapsed_s: float
    status: str | None = None

    def __str__(self) -> str:
        if self.state == "started":
            return f"{self.case} {self.stage}: started"
        if self.state == "running":
            return f"{self.case} {self.stage}: still running after {duration(self.elapsed_s)}"
        return f"{self.case} {self.stage}: {self.status} after {duration(self.elapsed_s)}"


class Watch:
    """What `watch` yields: set `status` before the block ends to have it said."""

    status: str | None = None


@contextmanager
def watch(case: str, stage: str, heartbeat_s: float,
          on_progress: Callable[[Event], None] | None = None,
          clock: Callable[[], float] = time.monotonic) -> Iterator[Watch]:
    """Say that a stage starts, that it still runs every `heartbeat_s`, and how it ended: as
    INFO records on the `pytest_kernelbench` logger, and to `on_progress` when given."""
    began = clock()

    def say(state: str, status: str | None = None) -> None:
        event = Event(case, stage, state, clock() - began, status)
        logger.info("kernelbench: %s", event)
        if on_progress is not None:
            on_progress(event)

    watched = Watch()
    say("started")
    ticker = Ticker(lambda: say("running"), heartbeat_s, name=f"kernelbench {stage}").start()
    try:
        yield watched
    finally:
        ticker.stop()
    say("finished", watched.status)
