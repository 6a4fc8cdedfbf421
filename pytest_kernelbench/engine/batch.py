"""A batch of attempts judged at once: builds ahead in one pool on all cores, then the stages
in a few judge processes that share the device as a pytest-xdist run's workers share it.

Each attempt goes queued -> building (its extension, if it has one) -> judging -> settled, and
its Future then holds its record; `on_counts` hears how many are in each state whenever
that changes. At most `in_flight` attempts are unsettled at once: `submit`
blocks until one settles. A cancelled attempt that no judge took yet is dropped (its build
too, where no other attempt shares it and none started it); closing settles every attempt left
as `not_run`, kills the builds and judges, and leaves no process behind.

Where the judges run and where the builds go are what a caller may change (`new_judge`,
`build_on`): judge processes and one build pool of this host by default, or judges and a build
pool per node on a Ray cluster (cluster.py). The dispatcher hears either judge through its
inbox the same way, and gives an attempt built on a node to a judge of that node when one is
idle.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, InvalidStateError
from dataclasses import dataclass
from multiprocessing.connection import wait
from pathlib import Path
from typing import Protocol

from pytest_kernelbench.building import builds
from pytest_kernelbench.engine import prebuild
from pytest_kernelbench.engine.judges import Judge, JudgeProcess
from pytest_kernelbench.record import Record
from pytest_kernelbench.reporting import heartbeat
from pytest_kernelbench.reporting.progress import not_run_record
from pytest_kernelbench.settings import Settings
from pytest_kernelbench.suite.discovery import Case
from pytest_kernelbench.suite.manifest import Entry

POLL_S = 0.05  # how often the dispatcher looks at builds while no judge speaks
UNSETTLED_BUILDS = ("pending", "running")
# A new judge from its index and the batch's start (what is built from then on is its own).
JudgeFactory = Callable[[int, float], Judge]


class RemoteBuild(Protocol):
    """An attempt's build elsewhere (a node of a cluster), as the dispatcher follows it: its
    status as a Build's, and, once done, its folder and report entry there."""

    status: str
    node_id: str | None  # where it is built: a judge there reads it from that node's cache

    def handed(self) -> tuple[Path, dict] | None: ...

    def drop(self) -> None: ...


# Where an attempt's extension is built instead of this host's pool (None: it builds nothing).
BuildFactory = Callable[[Case], RemoteBuild | None]


@dataclass(frozen=True)
class Counts:
    """Where a session's attempts are: waiting for a build slot or a judge, building,
    judging, and settled since the session began."""

    queued: int
    building: int
    judging: int
    settled: int


@dataclass
class Attempt:
    number: int
    case: Case
    future: Future
    overrides: dict[tuple[int, int], Entry]
    build: builds.Build | RemoteBuild | None = None
    judge: Judge | None = None
    on_settled: Callable[[], None] = lambda: None


class Batch:
    """The engine behind Session.submit (see the module docstring)."""

    def __init__(self, settings: Settings, device: str, judges: int, gpus: int, in_flight: int,
                 on_progress: Callable[[heartbeat.Event], None] | None = None,
                 on_counts: Callable[[Counts], None] | None = None,
                 new_judge: JudgeFactory | None = None, build_on: BuildFactory | None = None):
        """new_judge: where the judges run (JudgeProcesses of this host by default);
        build_on: where extensions build before judging (this host's pool by default)."""
        self.settings, self.device, self.gpus = settings, device, gpus
        self.build_on = build_on
        self.judges_wanted, self.in_flight = max(1, judges), max(1, in_flight)
        self.on_progress, self.on_counts = on_progress, on_counts
        self._told: Counts | None = None  # what on_counts heard last
        self._attempts: dict[int, Attempt] = {}  # unsettled, by number
        self._ready: list[int] = []  # built (or needing no build), waiting for a judge
        self._new = new_judge or self._judge_process
        self._judges: list[Judge] = []
        self._idle: list[Judge] = []
        self._changed = threading.Condition()
        self._settled = 0
        self._closing = False
        self._pool: prebuild.OpenPool | None = None  # made at the first attempt that builds
        self._arch: str | None = None
        self._started_s = time.time()  # what is built from now on is the batch's own
        self._thread = threading.Thread(target=self._dispatch, name="kb-batch", daemon=True)
        self._thread.start()

    def submit(self, number: int, case: Case, overrides: dict[tuple[int, int], Entry],
               on_settled: Callable[[], None] = lambda: None) -> Future:
        """Queue an attempt; blocks while `in_flight` attempts are unsettled."""
        attempt = Attempt(number, case, Future(), dict(overrides), on_settled=on_settled)
        remote = self.build_on(case) if self.build_on is not None else None
        build = self._plan_build(case) if self.build_on is None else None
        with self._changed:
            while len(self._attempts) >= self.in_flight and not self._closing:
                self._changed.wait()
            if self._closing:
                if remote is not None:
                    remote.drop()
                raise RuntimeError("the session is closed")
            if build is not None:
                attempt.build = self._building(build)
            elif remote is not None:
                attempt.build = remote
            else:
                self._ready.append(number)
            self._attempts[number] = attempt
            self._changed.notify_all()
        return attempt.future

    def counts(self) -> Counts:
        with self._changed:
            building = queued = judging = 0
            for attempt in self._attempts.values():
                if attempt.judge is not None:
                    judging += 1
                elif attempt.build is not None and attempt.build.status == "running":
                    building += 1
                else:
                    queued += 1
            return Counts(queued, building, judging, self._settled)

    def close(self) -> None:
        """Settle every attempt left as not_run; stop the builds and the judges."""
        with self._changed:
            self._closing = True
            self._changed.notify_all()
        self._thread.join()
        if self._pool is not None:
            self._pool.close(stop=True)
        for judge in list(self._judges):  # a record already sent still counts
            while judge.attempt is not None and judge.inbox.poll(0):
                self._hear(judge)
        with self._changed:
            left = list(self._attempts.values())
        for judge in self._judges:
            judge.stop(now=judge.attempt is not None)
        for attempt in left:
            record = not_run_record(attempt.case)
            record["error"] = "the session closed before this attempt was judged"
            self._settle(attempt, record)
        self._tell_counts()

    # --- the dispatcher's thread --------------------------------------------------------------

    def _plan_build(self, case: Case) -> builds.Build | None:
        """The attempt's build, where its candidate builds an extension on this device."""
        if not prebuild.builds_ahead(case, self.settings, self.device):
            return None  # built in its compile stage, as the pytest run does without a pool
        assert case.candidate is not None  # builds_ahead: it has one, and it builds
        wanted = {case.candidate.path: case.problem.path}
        if self._arch is None:
            self._arch = builds.cuda_arch(self.device)
        planned = builds.plan(list(wanted), self.settings.build_cache_root, self._arch, wanted)
        return planned[0] if planned else None

    def _building(self, build: builds.Build) -> builds.Build:
        """The build an attempt waits for (prebuild.OpenPool.add)."""
        if self._pool is None:
            assert self._arch is not None
            self._pool = prebuild.OpenPool(self.settings, self.device, self._arch)
        return self._pool.add(build)

    def _dispatch(self) -> None:
        while True:
            with self._changed:
                if self._closing:
                    return
                self._drop_cancelled()
                self._promote_built()
                self._hand_out()
                inboxes = {judge.inbox: judge for judge in self._judges
                           if judge.attempt is not None}
            self._tell_counts()
            if not inboxes:
                with self._changed:
                    self._changed.wait(POLL_S)
                continue
            for inbox in wait(list(inboxes), POLL_S):
                self._hear(inboxes[inbox])  # type: ignore[index]

    def _tell_counts(self) -> None:
        """on_counts, where the counts moved since it last heard them (a build that started or
        ended is seen within POLL_S)."""
        if self.on_counts is None:
            return
        now = self.counts()
        if now != self._told:
            self._told = now
            with contextlib.suppress(Exception):  # a caller's callback stops nothing
                self.on_counts(now)

    def _drop_cancelled(self) -> None:
        for number, attempt in list(self._attempts.items()):
            if attempt.judge is None and attempt.future.cancelled():
                del self._attempts[number]
                if number in self._ready:
                    self._ready.remove(number)
                build = attempt.build
                if isinstance(build, builds.Build):
                    if self._pool is not None and not any(
                            a.build is build for a in self._attempts.values()):
                        self._pool.drop(build.folder)
                elif build is not None:
                    build.drop()
                self._changed.notify_all()

    def _promote_built(self) -> None:
        for number, attempt in self._attempts.items():
            build = attempt.build
            if attempt.judge is None and number not in self._ready and build is not None \
                    and build.status not in UNSETTLED_BUILDS:
                self._ready.append(number)

    def _hand_out(self) -> None:
        while self._ready:
            judge = self._idle.pop() if self._idle else self._new_judge()
            if judge is None:
                return
            number = self._ready.pop(self._pick(judge))
            attempt = self._attempts[number]
            if not attempt.future.set_running_or_notify_cancel():  # cancelled meanwhile
                self._idle.append(judge)
                continue
            attempt.judge = judge
            judge.send(number, attempt.case, attempt.overrides, self._entry(attempt))

    def _pick(self, judge: Judge) -> int:
        """Which ready attempt the judge takes: the first built on its node, else the first."""
        node = getattr(judge, "node", None) or {}
        for index, number in enumerate(self._ready):
            build = self._attempts[number].build
            if build is not None and not isinstance(build, builds.Build) \
                    and build.node_id is not None and build.node_id == node.get("node_id"):
                return index
        return 0

    @staticmethod
    def _entry(attempt: Attempt) -> tuple[Path, dict] | None:
        """The attempt's build folder and report entry, for its judge (a judge on a cluster
        keeps them only where that folder is built on its own node: cluster.py)."""
        build = attempt.build
        if build is None:
            return None
        return (build.folder, build.entry()) if isinstance(build, builds.Build) \
            else build.handed()

    def _new_judge(self) -> Judge | None:
        if len(self._judges) >= self.judges_wanted:
            return None
        judge = self._new(len(self._judges), self._started_s)
        self._judges.append(judge)
        return judge

    def _judge_process(self, index: int, started_s: float) -> Judge:
        return JudgeProcess(index, self.settings, self.device, self.judges_wanted, self.gpus,
                            started_s)

    def _hear(self, judge: Judge) -> None:
        try:
            message = judge.inbox.recv()
        except (EOFError, OSError):
            self._judge_ended(judge)
            return
        kind, number = message[0], message[1]
        if kind == "event":
            if self.on_progress is not None:
                with contextlib.suppress(Exception):  # a caller's callback stops nothing
                    self.on_progress(message[2])
            return
        with self._changed:
            attempt = self._attempts.get(number)
            judge.attempt = None
            self._idle.append(judge)
        if attempt is not None:
            self._settle(attempt, message[2])

    def _judge_ended(self, judge: Judge) -> None:
        """A judge that died mid-case (killed from outside, the harness crashed in it, or its
        node left the cluster): its attempt is not_run, saying so, and a fresh judge takes its
        place when one is needed."""
        why = judge.ended()
        with self._changed:
            attempt = self._attempts.get(judge.attempt) if judge.attempt is not None else None
            self._judges.remove(judge)
            judge.stop(now=True)
        if attempt is not None:
            record = not_run_record(attempt.case)
            record["error"] = f"{why} while judging it"
            self._settle(attempt, record)

    def _settle(self, attempt: Attempt, record: Record) -> None:
        with self._changed:
            self._attempts.pop(attempt.number, None)
            self._settled += 1
            self._changed.notify_all()
        attempt.on_settled()
        with contextlib.suppress(InvalidStateError):  # its caller cancelled it meanwhile
            attempt.future.set_result(record)
