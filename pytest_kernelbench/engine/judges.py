"""Judge processes: each holds an Evaluator (its own sandbox worker, its share of the device)
and judges the cases it is sent one at a time, as a pytest-xdist worker judges its items.

The parent talks to each over two pipes (multiprocessing's Connection: pickled messages):
    parent -> judge   ("case", attempt, Case, overrides, build entry)   ("stop",)
    judge -> parent   ("event", attempt, heartbeat.Event)   ("record", attempt, Record)
                      ("error", attempt, text): the harness itself failed on the case
A judge started with a device and the run's settings binds it as an xdist worker of the same
index would be bound. It ends when its parent does (PR_SET_PDEATHSIG), and its sandbox worker
with it, so a session killed outright leaves no process behind.

`Judge` is what the batch's dispatcher needs of a judge wherever it runs: a JudgeProcess here,
or one placed on a Ray cluster (cluster.py), which says the same messages into its inbox.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import signal
import subprocess
import sys
import threading
import traceback
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Protocol

from pytest_kernelbench.engine.judging import judge_case, share_device
from pytest_kernelbench.gpu import devices
from pytest_kernelbench.judge.evaluation import Evaluator
from pytest_kernelbench.reporting.progress import not_run_record

PR_SET_PDEATHSIG = 1  # linux/prctl.h
STOP_GRACE_S = 10.0  # a judge asked to stop between cases ends within this, or is killed
JUDGES_PER_GPU = 8  # judges sharing one GPU, as `pytest -n 8` shares one


class Judge(Protocol):
    """A judge as the dispatcher sees it: `inbox` hears the messages above, and ends (EOF) when
    the judge did; `attempt` is the one it judges now."""

    inbox: Connection
    attempt: int | None

    def send(self, attempt: int, case: Any, overrides: dict,
             build: tuple[Path, dict] | None) -> None: ...

    def stop(self, now: bool = False) -> None: ...

    def ended(self) -> str:
        """Why the judge ended, once its inbox did: the words of a not_run record's error."""
        ...


class JudgeProcess:
    """The parent's handle on one judge process. node: the cluster node it runs on, for the
    records' placement, and env: the environment it runs with there (cluster.py); else this
    process's."""

    def __init__(self, index: int, settings: Any, device: str, processes: int, gpus: int,
                 started_s: float, node: dict[str, str] | None = None,
                 env: dict[str, str] | None = None):
        to_judge_r, to_judge_w = os.pipe()
        from_judge_r, from_judge_w = os.pipe()
        self.index = index
        self.process = subprocess.Popen(
            [sys.executable, "-m", "pytest_kernelbench.engine", str(to_judge_r),
             str(from_judge_w)], pass_fds=(to_judge_r, from_judge_w), env=env)
        os.close(to_judge_r)
        os.close(from_judge_w)
        self.inbox = Connection(from_judge_r, writable=False)  # what the judge says
        self._outbox = Connection(to_judge_w, readable=False)
        self.attempt: int | None = None  # the attempt it judges now
        # started_s: extensions built since then are the batch's own ("built", not "cached")
        self._outbox.send(("start", settings, device, index, processes, gpus, started_s, node))

    def send(self, attempt: int, case: Any, overrides: dict,
             build: tuple[Path, dict] | None) -> None:
        """Judge the case; build: its build folder and that build's report entry, if any."""
        self.attempt = attempt
        self._outbox.send(("case", attempt, case, overrides, build))

    def stop(self, now: bool = False) -> None:
        """End the judge: between cases it closes its evaluator; `now` (or past the grace) it is
        killed, and its sandbox worker with it."""
        if not now:
            with contextlib.suppress(OSError):
                self._outbox.send(("stop",))
            try:
                self.process.wait(STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                now = True
        if now and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for end in (self.inbox, self._outbox):
            with contextlib.suppress(OSError):
                end.close()

    def ended(self) -> str:
        return f"its judging process ended (exit code {self.process.wait()})"


def _die_with_parent() -> None:
    with contextlib.suppress(OSError, AttributeError):  # no prctl: not Linux
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def main(inbox_fd: int, outbox_fd: int) -> None:
    parent = os.getppid()
    _die_with_parent()
    if os.getppid() != parent:
        return
    inbox = Connection(inbox_fd, writable=False)
    outbox = Connection(outbox_fd, readable=False)
    saying = threading.Lock()  # heartbeats come from another thread

    def say(*message: Any) -> None:
        with saying:
            outbox.send(message)

    _, settings, device, index, processes, gpus, started_s, node = inbox.recv()
    device = devices.bind_device(device, f"gw{index}", gpus)
    evaluator = Evaluator(settings, device, started_s=started_s, worker=f"judge{index}",
                          node=node)
    share_device(evaluator, processes, gpus)
    builds: dict = {}
    evaluator.build_entry = builds.get
    try:
        while True:
            try:
                message = inbox.recv()
            except EOFError:
                return
            if message[0] == "stop":
                return
            _, attempt, case, overrides, build = message
            evaluator.overrides.clear()
            evaluator.overrides.update(overrides)
            builds.clear()
            if build is not None:
                builds[build[0]] = build[1]
            try:
                record = judge_case(evaluator, case, settings.heartbeat_s,
                                    functools.partial(say, "event", attempt))
            except Exception:  # the harness's own failure: this attempt's record says so
                failed = not_run_record(case)
                failed["error"] = ("the harness failed while judging it: "
                                   + traceback.format_exc(limit=-3).strip()[-2000:])
                say("error", attempt, failed)
            else:
                say("record", attempt, record)
            evaluator.forget(case)
    finally:
        evaluator.close()
