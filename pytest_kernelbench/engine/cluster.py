"""Judges on a Ray cluster: the batch's judges (batch.py) placed as Ray actors, for loops that
outgrow one host.

Each judge is an actor (`JudgeHost`) holding one judge process on its node, the same
`python -m pytest_kernelbench.engine` a session runs locally (judges.py), so a verdict and the
candidate's confinement are what they are on one host. On the driver, a `RayJudge` stands where
a JudgeProcess stands: for each attempt a relay thread reads the problem's and the candidate's
text (their paths exist only here), calls the actor, and posts what its judge says into the
judge's `inbox`, so the dispatcher waits on its pipes as it always does. The actor writes the
files into a scratch folder of its own (level<N>/<id>_<Name>.py, as the judge expects).

One actor per GPU (num_gpus=1, so no other work of the session shares a GPU with a timing)
where the cluster has GPUs, else `judges` actors of one CPU each. Extensions build in the
judge's compile stage on its node: the driver's build pool is not used. A node or actor that
dies mid-attempt costs that attempt a `not_run` record saying so (RayActorError); the attempt
is not queued again, and a fresh actor takes the judge's place for the next one.

Ray is an optional extra (`pip install 'pytest-kernelbench[ray]'`): it is imported in the
functions below that need it, never at import, so `import pytest_kernelbench` does not load it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import shutil
import socket
import tempfile
import threading
from collections.abc import Iterator
from multiprocessing import Pipe
from pathlib import Path
from typing import Any

from pytest_kernelbench.engine.judges import STOP_GRACE_S, JudgeProcess
from pytest_kernelbench.settings import Settings
from pytest_kernelbench.suite.discovery import Case

CPU_JUDGES = 2  # judges on a cluster without GPUs, unless `judges` says
# How long an attempt waits for its judge's actor to start: an autoscaler may take minutes to
# bring a node, but a cluster that lost its GPUs must not keep the attempt forever.
PLACE_S = 600.0
SCRATCH_PREFIX = "kernelbench-ray-"  # + the actor's pid: a folder whose actor is gone is swept
DEVICES = ("auto", "cuda", "cpu")  # a cluster places its judges itself: no cuda:N


@dataclasses.dataclass(frozen=True)
class Cluster:
    """A session's Ray cluster: the device its judges use, how many, what each claims."""

    settings: Settings
    device: str
    judges: int
    resources: dict[str, float]
    started_ray: bool  # this session started Ray (ray.init), so it shuts it down

    def judge(self, index: int, started_s: float) -> RayJudge:
        """batch.JudgeFactory: a judge placed on the cluster."""
        return RayJudge(index, self.settings, self.device, started_s, self.resources)

    def close(self) -> None:
        if self.started_ray:
            import ray

            ray.shutdown()


def connect(address: str, settings: Settings, device: str, judges: int | None) -> Cluster:
    """Join the cluster: Ray as it is where this process already initialized it (a trainer's
    driver), else `ray.init()` for 'ray' (RAY_ADDRESS, or a local cluster) or
    `ray.init(address)` for an address ('auto', 'ray://host:10001')."""
    if not isinstance(address, str) or not address:
        raise ValueError(f"cluster: 'ray' or a Ray address ('auto', 'ray://host:10001'), "
                         f"got {address!r}")
    if device not in DEVICES:
        raise ValueError(f"device {device!r}: a cluster places its judges itself; "
                         f"use one of {', '.join(DEVICES)}")
    try:
        import ray
    except ImportError:
        raise ImportError("cluster: Ray is not installed; "
                          "pip install 'pytest-kernelbench[ray]'") from None
    started = not ray.is_initialized()
    if started:
        ray.init(address=None if address == "ray" else address)
    total = ray.cluster_resources()
    gpus, cpus = int(total.get("GPU", 0)), int(total.get("CPU", 0))
    if device == "cuda" and gpus == 0:
        if started:
            ray.shutdown()
        raise ValueError("device 'cuda': the Ray cluster has no GPU")
    if gpus and device != "cpu":
        return Cluster(settings, "cuda", min(judges or gpus, gpus), {"num_gpus": 1}, started)
    count = min(judges or CPU_JUDGES, max(1, cpus))  # one CPU each: more would never start
    return Cluster(settings, "cpu", count, {"num_cpus": 1}, started)


class RayJudge:
    """The driver's handle on one judge on the cluster (judges.Judge)."""

    def __init__(self, index: int, settings: Settings, device: str, started_s: float,
                 resources: dict[str, float]):
        import ray

        self.index = index
        self.inbox, self._post = Pipe(duplex=False)  # what the actor's judge says, relayed
        self.attempt: int | None = None
        # Any: the handle's methods are Ray's, made from JudgeHost's at run time
        self.actor: Any = ray.remote(JudgeHost).options(**resources).remote(
            index, settings, device, started_s)
        self.node: dict[str, str] | None = None  # where the actor runs, once it answered
        self._why = "its judge on the Ray cluster failed"
        self._relay: threading.Thread | None = None

    def send(self, attempt: int, case: Case, overrides: dict,
             build: tuple[Path, dict] | None) -> None:
        assert build is None, "a cluster's attempts build in their compile stage"
        self.attempt = attempt
        self._relay = threading.Thread(target=self._relay_attempt,
                                       args=(attempt, case, overrides),
                                       name=f"kb-ray-judge{self.index}", daemon=True)
        self._relay.start()

    def _relay_attempt(self, attempt: int, case: Case, overrides: dict) -> None:
        import ray

        try:
            problem = case.problem.path.read_text()
            candidate = case.candidate.path.read_text() if case.candidate else None
            if self.node is None:
                where = self.actor.where.remote()
                placed, _ = ray.wait([where], timeout=PLACE_S)
                if not placed:
                    raise TimeoutError(f"no room on the cluster for it in {PLACE_S:.0f} s")
                self.node = ray.get(where)
            for reference in self.actor.judge.remote(attempt, case, overrides, problem,
                                                     candidate):
                message = ray.get(reference)
                self._post.send(message)
                if message[0] != "event":
                    return
        except Exception as exc:  # the actor or its node died, or its judge did: EOF says so
            on = f" on node {self.node['node']}" if self.node else ""
            self._why = f"its judge on the Ray cluster{on} failed ({reason(exc)})"
            self._post.close()

    def stop(self, now: bool = False) -> None:
        """Close the actor's judge between attempts (`now`: kill the actor at once; its judge
        process and sandbox worker end with it), then let the cluster have its resources."""
        import ray

        if not now:
            with contextlib.suppress(Exception):
                ray.get(self.actor.close.remote(), timeout=STOP_GRACE_S)
        with contextlib.suppress(Exception):
            ray.kill(self.actor)
        self.inbox.close()  # a relay still sending stops at the broken pipe
        if self._relay is not None:
            self._relay.join(STOP_GRACE_S)
        if self._relay is None or not self._relay.is_alive():
            self._post.close()

    def ended(self) -> str:
        return self._why


def reason(exc: BaseException) -> str:
    """An error from Ray in a line: the actor's own exception where it raised one, else Ray's
    words without their indented details (ids, pids)."""
    cause = getattr(exc, "cause", None)  # a RayTaskError carries the actor's exception
    if isinstance(cause, BaseException):
        exc = cause
    lines = [line.strip() for line in str(exc).splitlines()
             if line.strip() and not line[:1].isspace()]
    return f"{type(exc).__name__}: {' '.join(lines)}"[:500]


class JudgeHost:
    """A judge on a node (made a Ray actor by RayJudge): the judge process the local engine
    runs, fed each attempt's files from a scratch folder of its own."""

    def __init__(self, index: int, settings: Settings, device: str, started_s: float):
        import ray

        sweep_scratch(Path(tempfile.gettempdir()))
        self.scratch = Path(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-"))
        candidates = self.scratch / "candidates"
        candidates.mkdir()
        # This node's folders; a build cache the driver did not name is this node's default.
        here = dataclasses.replace(settings, problems_dir=self.scratch / "problems",
                                   candidate_dirs=(candidates,))
        self.node = {"node": socket.gethostname(),
                     "node_id": ray.get_runtime_context().get_node_id()}
        # One judge on the actor's own device (Ray's CUDA_VISIBLE_DEVICES: its one GPU).
        self.judge_process = JudgeProcess(index, here, device, 1, 1, started_s, self.node)

    def where(self) -> dict[str, str]:
        return self.node

    def judge(self, attempt: int, case: Case, overrides: dict, problem: str,
              candidate: str | None) -> Iterator[tuple]:
        """What the judge process says of one attempt, streamed: its events, then its record."""
        here = write_files(self.scratch, case, problem, candidate)
        self.judge_process.send(attempt, here, overrides, None)
        try:
            while True:
                try:
                    message = self.judge_process.inbox.recv()
                except (EOFError, OSError):
                    raise RuntimeError(self.judge_process.ended()) from None
                yield message
                if message[0] != "event":
                    return
        finally:
            if here.candidate is not None:
                here.candidate.path.unlink(missing_ok=True)

    def close(self) -> None:
        self.judge_process.stop()
        shutil.rmtree(self.scratch, ignore_errors=True)


def write_files(scratch: Path, case: Case, problem: str, candidate: str | None) -> Case:
    """The case with its files written under scratch: the problem under a folder named by its
    text (two problems of one name stay apart; one problem's reference is reused), in the
    level<N>/<id>_<Name>.py layout, and the candidate's snapshot."""
    digest = hashlib.sha256(problem.encode()).hexdigest()[:16]
    known = case.problem
    problem_path = (scratch / "problems" / digest / f"level{known.level}"
                    / f"{known.problem_id}_{known.name}.py")
    if not problem_path.exists():
        problem_path.parent.mkdir(parents=True, exist_ok=True)
        problem_path.write_text(problem)
    here = dataclasses.replace(case, problem=dataclasses.replace(known, path=problem_path))
    if case.candidate is None or candidate is None:
        return here
    candidate_path = scratch / "candidates" / case.candidate.path.name
    candidate_path.write_text(candidate)
    return dataclasses.replace(here, candidate=dataclasses.replace(case.candidate,
                                                                   path=candidate_path))


def sweep_scratch(folder: Path) -> None:
    """Remove the scratch folders of actors that were killed (no cleanup runs then)."""
    for scratch in folder.glob(f"{SCRATCH_PREFIX}*"):
        pid = scratch.name.removeprefix(SCRATCH_PREFIX).partition("-")[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(scratch, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True
