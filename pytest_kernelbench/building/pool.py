"""The build pool: the missing builds of a plan (builds.py), each in its own build process
(process.py), a few at a time in a background thread while the GPU work goes on.

A pytest run gives its pool the whole plan at once, and the pool ends with its queue. A batch
of attempts that arrive one by one keeps an open-ended pool instead: each attempt adds its
build as it comes (drops it, if it goes before its build started), and close() ends the pool.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from pytest_kernelbench import confine
from pytest_kernelbench.building import builds, cores, pch
from pytest_kernelbench.building.builds import Build, compiler_jobs
from pytest_kernelbench.building.guard import Guard
from pytest_kernelbench.gpu import devices


class BuildPool:
    """The run's builds, at most `jobs` at a time, in a background thread while items run.
    While any process of the host times a candidate, the builds are stopped and none starts;
    with `split` (cores.CoreSplit), they run on the shared cores alone and never stop.

    A case's items need only its own build: wait_for(folder) moves a build nobody started
    to the front of the queue (started at once, even past `jobs`) and returns when it is
    done, so the GPU work of one case starts while the others still compile. Builds run at
    a lower priority (nice) than the processes that time candidates. With `protected`
    (folders a build may not read), each build process is confined. With `headers` (a folder),
    the precompiled torch headers that several builds share are made there first (pch.py),
    beside the first builds, each build process may read them, and on_header hears of each.

    With open_ended, builds also come after start() (add, drop), and the thread waits for more
    whenever none is left, until close(). A header is started as soon as enough of the builds
    added so far share its command (pch.HeaderPlan); a build that started before it was made
    parses the header itself. The host is
    told that compilers may run (devices.announce_compilers) only while builds are queued or
    running, so that an idle pool holds up no timing (and never with `split`).
    """

    def __init__(self, builds: list[Build], arch: str, jobs: int, timeout_s: float,
                 on_done: Callable[[Build, int, int, float], None] = lambda *a: None,
                 protected: tuple[Path, ...] | None = None, compilers: int | None = None,
                 headers: Path | None = None, on_header: pch.OnEnd = lambda *a: None,
                 open_ended: bool = False, split: cores.CoreSplit | None = None):
        self.arch, self.jobs, self.timeout_s = arch, max(jobs, 1), timeout_s
        self.split = split
        self.compilers = compilers or compiler_jobs(self.jobs, 1)  # MAX_JOBS of each build
        self.on_done, self.protected, self.headers = on_done, protected, headers
        self.on_header, self.open_ended = on_header, open_ended
        if headers is not None:
            headers.mkdir(parents=True, exist_ok=True)  # a confined build's read rule needs it
        self._by_folder = {build.folder: build for build in builds}
        self._queue = [build for build in builds if build.status == "pending"]
        self._header_plan = pch.HeaderPlan()  # the headers the queued builds share
        for build in self._queue:
            self._plan_header(build)
        self._urgent: set[Path] = set()
        self._total, self._done = len(self._queue), 0
        self._changed = threading.Condition()
        self._stopping = False
        self._closed = False  # by close(): no build is added from then on
        self._thread: threading.Thread | None = None
        self._announced = None  # devices.announce_compilers, while builds are queued or running
        self._guard: Guard | None = None  # kills the builds if this process dies without it

    def start(self) -> BuildPool:
        with self._changed:
            # an open-ended pool announces its first add; split builds keep off the timings' cores
            if self.split is None and (self._queue or not self.open_ended):
                self._announced = devices.announce_compilers()
        self._thread = threading.Thread(target=self.run, name="kb-builds", daemon=True)
        self._thread.start()
        return self

    def add(self, build: Build) -> Build:
        """Queue a build as plan() makes it (one that is not pending is only recorded), and
        return it; where the pool knows a build into the same folder already, return that one
        instead: two attempts with the same source share their build. A build dropped before
        is queued again."""
        with self._changed:
            if self._closed or (self._thread is not None and not self.open_ended):
                raise RuntimeError("the build pool takes no more builds: it is closed, or it "
                                   "builds a fixed list")
            known = self._by_folder.setdefault(build.folder, build)
            if known.status == "cancelled":
                known.status = "pending"
            if known.status == "pending" and known not in self._queue:
                self._queue.append(known)
                self._total += 1
                if known is build:  # a build queued again was counted the first time
                    self._plan_header(known)
                self._changed.notify_all()
            return known

    def drop(self, folder: Path) -> bool:
        """Take the build into folder off the queue, where nobody has started it: it is then
        cancelled, and on_done never hears of it. Whether it was taken off (a running build
        runs on)."""
        with self._changed:
            build = self._by_folder.get(folder)
            if build is None or build not in self._queue:
                return False
            self._queue.remove(build)
            self._urgent.discard(folder)
            build.status = "cancelled"
            self._total -= 1
            self._changed.notify_all()
            return True

    def wait_for(self, folder: Path) -> None:
        """Return once the build into folder is done here, or by the worker holding it."""
        with self._changed:
            build = self._by_folder.get(folder)
            if build is None:
                return
            if build in self._queue:
                self._queue.remove(build)
                self._queue.insert(0, build)
                self._urgent.add(folder)
                self._changed.notify_all()
            while build.status in ("pending", "running") and self._thread is not None \
                    and self._thread.is_alive():
                self._changed.wait(builds.POLL_S)
        if build.status == "elsewhere":
            _wait_for(build)

    def entry(self, folder: Path) -> dict | None:
        """The report's entry for the build into folder, as this process knows it."""
        build = self._by_folder.get(folder)
        return None if build is None else build.entry()

    def close(self, stop: bool = False) -> None:
        """Wait for the builds left (or, with stop, kill the running ones and forget the
        queued ones) and end the thread. No build is added from then on."""
        with self._changed:
            self._closed = True
            self._stopping = self._stopping or stop
            self._changed.notify_all()  # an idle open-ended pool's thread waits for this
        if self._thread is not None:
            self._thread.join()

    def run(self) -> None:
        if self.split is not None:  # the processes this thread starts inherit its cores
            cores.pin_thread(self.split.shared)
        try:
            self._run()
            if self._guard is not None:
                self._guard.track(())  # every build reaped: the guard has nothing to kill
        finally:
            if self._guard is not None:  # after a failure here, it kills what still runs
                self._guard.close()

    def _run(self) -> None:
        started_at = time.perf_counter()
        running: list[tuple[Build, subprocess.Popen, object, float]] = []
        paused_at: float | None = None  # while a timing runs on this host, builds are stopped
        niceness = builds.build_niceness(os.getpriority(os.PRIO_PROCESS, 0))
        headers = pch.Headers(self.headers or Path(), [], niceness, self.on_header)
        while True:
            with self._changed:
                if self.headers is not None and not self._stopping:
                    headers.start(self._headers_due())
                compiling = headers.poll(stop=self._stopping)
                if self._stopping:
                    self._queue.clear()
                    _signal([p for _, p, _, _ in running], signal.SIGKILL)
                if self.open_ended and self._queue and self._announced is None \
                        and self.split is None:
                    self._announced = devices.announce_compilers()  # before its compilers start
                # none starts while a timing runs: one that began before this pool's
                # announcement did not pause for compilers
                while paused_at is None and self._queue and (
                        len(running) + compiling < self.jobs
                        or self._queue[0].folder in self._urgent) \
                        and not self._timing():
                    build = self._queue.pop(0)
                    started = _start(build, self.arch, self.protected, self.compilers,
                                     niceness, self.headers)
                    if started is None:
                        if build.status == "pending":
                            build.status = "elsewhere"
                        self._finished(build, started_at)
                    else:
                        build.status = "running"
                        build.phases["queued_s"] = time.perf_counter() - started_at
                        running.append((build, *started, time.perf_counter()))
                if not self._queue and not running and not compiling:
                    if self._announced is not None:
                        self._announced.close()
                        self._announced = None
                    self._changed.notify_all()
                    if not self.open_ended or self._closed:
                        return
                    self._changed.wait()  # idle until add() or close()
                    continue
            time.sleep(devices.QUIET_POLL_S)
            timing = not self._stopping and self._timing()
            processes = [p for _, p, _, _ in running] + headers.processes()
            if processes and self._guard is None:
                self._guard = Guard()
            if self._guard is not None:  # before any of them is stopped
                self._guard.track(p.pid for p in processes)
            if timing and paused_at is None and processes:
                paused_at = time.perf_counter()
                _signal(processes, signal.SIGSTOP)
            elif paused_at is not None and (not timing or not processes):
                _signal(processes, signal.SIGCONT)
                paused = time.perf_counter() - paused_at  # not counted against the timeout
                running = [(b, p, lock, began + paused) for b, p, lock, began in running]
                for build, *_ in running:
                    build.phases["paused_s"] = build.phases.get("paused_s", 0.0) + paused
                paused_at = None
            if paused_at is None:
                running = self._reap(running, started_at)

    def _timing(self) -> bool:
        """Whether builds must stand still now: a timing runs on this host, and the builds share
        its cores."""
        return self.split is None and devices.timing_in_progress()

    def _plan_header(self, build: Build) -> None:
        if self.headers is None:
            return
        try:
            self._header_plan.add(build.candidate.read_text(errors="replace"))
        except Exception:  # noqa: BLE001 - a header only saves time (see _headers_due)
            pass

    def _headers_due(self) -> list[list[str]]:
        """The header commands that enough of the builds added so far share, not yet started.
        A header only saves time: whatever goes wrong in planning one leaves the builds
        without it."""
        try:
            return self._header_plan.due()
        except Exception:  # noqa: BLE001 - e.g. a RecursionError parsing a generated file
            return []

    def _reap(self, running: list, started_at: float) -> list:
        """Finish the builds whose process ended or ran out of time; the running others."""
        still = []
        for build, process, lock, began in running:
            overdue = time.perf_counter() - began > self.timeout_s
            if process.poll() is None and not overdue:
                still.append((build, process, lock, began))
                continue
            if overdue and process.poll() is None:
                _signal([process], signal.SIGKILL)
                process.wait()
            build.seconds = time.perf_counter() - began  # began moved on by each pause
            ended = time.time()
            build.span = (ended - build.seconds - build.phases.get("paused_s", 0.0), ended)
            with self._changed:  # wait_for sees the status only once on_done heard of it
                builds.finish(build, process.returncode, overdue, self.timeout_s)
                lock.close()  # type: ignore[attr-defined]
                self._finished(build, started_at)
        return still

    def _finished(self, build: Build, started_at: float) -> None:
        self._done += 1
        self.on_done(build, self._done, self._total, time.perf_counter() - started_at)
        self._changed.notify_all()


def _signal(processes: list[subprocess.Popen], signum: int) -> None:
    """Signal each build's (or header compile's) process group: its Python process and the
    compilers it started."""
    for process in processes:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signum)


def _wait_for(build: Build) -> None:
    """Block until the worker holding this build's lock is done with it."""
    with builds.holding(build.folder):
        pass


def _start(build: Build, arch: str, protected: tuple[Path, ...] | None, compilers: int,
           niceness: int, headers: Path | None = None):
    build.folder.mkdir(parents=True, exist_ok=True)
    lock = open(build.folder / builds.LOCK_FILE, "a+")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.close()
        return None
    if builds.settled(build):  # by another worker, since the plan
        lock.close()
        return None
    builds.clear_stale_batons(build.folder)
    env = {**os.environ, **builds.build_env(build.folder, arch), "CUDA_VISIBLE_DEVICES": "",
           "MAX_JOBS": str(compilers)}
    if headers is not None:
        env[pch.ROOT_ENV] = str(headers)
    if protected is not None:
        scratch = build.folder / "scratch"  # removed with what it holds once the build ends
        scratch.mkdir(exist_ok=True)
        env[confine.ENV_VAR] = confine.policy_for(
            build.candidate, build.problem, scratch, build.folder, list(protected),
            reads=(headers,) if headers is not None else ()).to_json()
    command = [sys.executable, "-m", "pytest_kernelbench.building.process", str(build.candidate)]
    if build.problem is not None:
        command.append(str(build.problem))
    with open(build.folder / builds.LOG_FILE, "wb") as log:
        process = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=log,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    with contextlib.suppress(OSError):  # compilers yield to the processes timing candidates
        os.setpriority(os.PRIO_PROCESS, process.pid, niceness)
    return process, lock
