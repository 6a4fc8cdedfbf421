"""Judges on a Ray cluster: the batch's judges (batch.py) placed as Ray actors, for loops that
outgrow one host.

Each judge is an actor (`JudgeHost`) holding one judge process on its node, the same
`python -m pytest_kernelbench.engine` a session runs locally (judges.py), so a verdict and the
candidate's confinement are what they are on one host. On the driver, a `RayJudge` stands where
a JudgeProcess stands: for each attempt a relay thread reads the problem's and the candidate's
text (their paths exist only here), calls the actor, and posts what its judge says into the
judge's `inbox`, so the dispatcher waits on its pipes as it always does. The actor writes the
files into a scratch folder of its own (level<N>/<id>_<Name>.py, as the judge expects).

Eight actors per GPU where the cluster has GPUs, each claiming an eighth of one
(`gpu_judges`), as eight judges share a GPU on one host: together they claim it whole, so Ray
places no other work there, and the device lock they share on their node keeps each timing alone
on it. Else `judges` actors of one CPU each. Extensions build ahead on
the nodes that judge: each such node gets one `BuildHost` actor (it claims none of Ray's CPUs,
so it always fits beside the judges, and runs an open-ended build pool on the node's cores),
and each attempt that builds is given, as it is submitted, to the node with the fewest builds
under way for its judges. The pool builds into the node's build cache, where a judge of that
node finds the build by its source; the batch gives the attempt to a judge of that node when
one is idle, and a judge of another node builds it in its compile stage, as one whose build
host failed does. A node or actor that dies mid-attempt costs that attempt a `not_run` record
saying so (RayActorError); the attempt is not queued again, and a fresh actor takes the
judge's place for the next one.

Ray is an optional extra (`pip install 'pytest-kernelbench[ray]'`): it is imported in the
functions below that need it, never at import, so `import pytest_kernelbench` does not load it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import math
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from multiprocessing import Pipe
from pathlib import Path
from typing import Any

from pytest_kernelbench.building import builds
from pytest_kernelbench.engine import prebuild
from pytest_kernelbench.engine.judges import JUDGES_PER_GPU, STOP_GRACE_S, JudgeProcess
from pytest_kernelbench.settings import Settings
from pytest_kernelbench.suite.discovery import Case

CPU_JUDGES = 2  # judges on a cluster without GPUs, unless `judges` says
# How long an attempt waits for its judge's actor to start: an autoscaler may take minutes to
# bring a node, but a cluster that lost its GPUs must not keep the attempt forever.
PLACE_S = 600.0
SCRATCH_PREFIX = "kernelbench-ray-"  # + the actor's pid: a folder whose actor is gone is swept
DEVICES = ("auto", "cuda", "cpu")  # a cluster places its judges itself: no cuda:N
BUILD_POLL_S = 0.1  # how often a build host looks at a build it reports on
BUILD_CALLS = 256  # builds a build host follows at once (a threaded actor's concurrency)
# What Ray sets in every actor's environment (OMP_NUM_THREADS=1 where an actor claims no more
# than one CPU) and a judge on a node takes from the driver instead.
THREAD_VARIABLES = ("OMP_NUM_THREADS",)


@dataclasses.dataclass
class Cluster:
    """A session's Ray cluster: the device its judges use, how many, what each claims."""

    settings: Settings
    device: str
    judges: int
    resources: dict[str, float]
    started_ray: bool  # this session started Ray (ray.init), so it shuts it down
    builders: NodeBuilders = dataclasses.field(init=False)  # its build hosts, one a node

    def __post_init__(self) -> None:
        self.builders = NodeBuilders(self.settings, self.device)

    def judge(self, index: int, started_s: float) -> RayJudge:
        """batch.JudgeFactory: a judge placed on the cluster."""
        return RayJudge(index, self.settings, self.device, started_s, self.resources)

    def build(self, case: Case) -> NodeBuild | None:
        """batch.BuildFactory: the attempt's extension built ahead on a judging node."""
        return self.builders.build(case)

    def close(self) -> None:
        self.builders.close()
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
        count, share = gpu_judges(gpus, judges)
        return Cluster(settings, "cuda", count, {"num_gpus": share}, started)
    count = min(judges or CPU_JUDGES, max(1, cpus))  # one CPU each: more would never start
    return Cluster(settings, "cpu", count, {"num_cpus": 1}, started)


def gpu_judges(gpus: int, judges: int | None) -> tuple[int, float]:
    """How many judges a cluster's GPUs get, and the share of a GPU each claims from Ray:
    JUDGES_PER_GPU to a GPU unless `judges` says, as a session on one host shares one. The
    judges of a GPU claim it whole between them, so Ray places no other work there, and on
    their node they share its device lock, which keeps each timing alone on it."""
    count = judges or gpus * JUDGES_PER_GPU
    per_gpu = -(-count // gpus)
    return count, math.floor(10_000 / per_gpu) / 10_000  # Ray counts a GPU in 1/10000ths


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
            index, settings, device, started_s, driver_threads(os.environ), driver_niceness())
        self.node: dict[str, str] | None = None  # where the actor runs, once it answered
        self._why = "its judge on the Ray cluster failed"
        self._relay: threading.Thread | None = None

    def send(self, attempt: int, case: Case, overrides: dict,
             build: tuple[Path, dict] | None) -> None:
        """Judge the case; build: its build folder and entry on this judge's node, if any."""
        self.attempt = attempt
        self._relay = threading.Thread(target=self._relay_attempt,
                                       args=(attempt, case, overrides, build),
                                       name=f"kb-ray-judge{self.index}", daemon=True)
        self._relay.start()

    def _relay_attempt(self, attempt: int, case: Case, overrides: dict,
                       build: tuple[Path, dict] | None) -> None:
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
                                                     candidate, build):
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

    def __init__(self, index: int, settings: Settings, device: str, started_s: float,
                 threads: dict[str, str | None], niceness: int):
        import ray

        take_niceness(niceness)  # this thread's: the judge process and its workers inherit it
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
        self.judge_process = JudgeProcess(index, here, device, 1, 1, started_s, self.node,
                                          with_threads(os.environ, threads))

    def where(self) -> dict[str, str]:
        return self.node

    def judge(self, attempt: int, case: Case, overrides: dict, problem: str,
              candidate: str | None, build: tuple[Path, dict] | None = None
              ) -> Iterator[tuple]:
        """What the judge process says of one attempt, streamed: its events, then its record.
        build: the attempt's build folder and entry, made ahead by a build host: kept where
        that folder is on this node, built, failed or deferred, so the record has its entry as
        on one host (another node's folder is not; the judge builds the extension in its
        compile stage)."""
        if build is not None and not Path(build[0]).is_dir():
            build = None
        here = write_files(self.scratch, case, problem, candidate)
        self.judge_process.send(attempt, here, overrides, build)
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


def driver_threads(environ: Mapping[str, str]) -> dict[str, str | None]:
    """The driver's thread settings (THREAD_VARIABLES; None where unset), for its judges."""
    return {name: environ.get(name) for name in THREAD_VARIABLES}


def driver_niceness() -> int:
    """The niceness of the driver's calling thread, for its judges and build hosts: Ray starts
    its workers at 15, below the builds' BUILD_NICENESS, where a judge would yield its imports,
    trials and worker starts to the node's compilers."""
    return os.getpriority(os.PRIO_PROCESS, 0)


def take_niceness(niceness: int) -> None:
    """Run this thread, and the processes it starts from now on, at `niceness` (the driver's)
    in place of Ray's. Where the node refuses it (a higher priority needs CAP_SYS_NICE), the
    thread keeps Ray's, and the node's builds still run below it (build_niceness)."""
    try:
        os.setpriority(os.PRIO_PROCESS, 0, niceness)
    except OSError as exc:
        _tell_once(f"pytest-kernelbench: {socket.gethostname()} keeps Ray's niceness "
                   f"{os.getpriority(os.PRIO_PROCESS, 0)} for its judges, not the driver's "
                   f"{niceness} ({exc.strerror})")


@functools.cache  # a build host's threads each try: its log says it once
def _tell_once(line: str) -> None:
    print(line, file=sys.stderr)


def with_threads(environ: Mapping[str, str], threads: Mapping[str, str | None]
                 ) -> dict[str, str]:
    """A judge's environment on its node: the actor's, with the driver's thread settings in
    place of Ray's. A judge that kept Ray's OMP_NUM_THREADS=1 would run the problems' and the
    candidates' CPU work on one thread, where a session on one host runs it on the host's cores:
    slower trials, and on a CPU device other timings than on one host."""
    merged = {name: value for name, value in environ.items() if name not in threads}
    merged.update({name: value for name, value in threads.items() if value is not None})
    return merged


class NodeBuilders:
    """The session's build hosts, one per judging node, each made at its node's first build;
    an attempt's build goes to the node with the fewest builds under way per judge it holds."""

    def __init__(self, settings: Settings, device: str):
        self.settings, self.device = settings, device
        self.hosts: dict[str, Any] = {}  # node id -> its BuildHost actor
        self.judges: dict[str, int] | None = None  # node id -> judges it holds (GPUs or CPUs)
        self.under_way: dict[str, int] = {}  # node id -> its builds not settled yet
        self.lock = threading.Lock()

    def build(self, case: Case) -> NodeBuild | None:
        """The attempt's build on a node; None where nothing is built ahead for it, as on one
        host (prebuild.builds_ahead): it goes to a judge at once, with no wait for a build
        actor to start and answer that it builds nothing."""
        if not prebuild.builds_ahead(case, self.settings, self.device):
            return None
        with self.lock:
            node = self._least_busy()
            if node is None:
                return None  # no judging node: each judge builds in its compile stage
            host = self.hosts.get(node) or self._start(node)
            self.under_way[node] = self.under_way.get(node, 0) + 1
        return NodeBuild(host, node, case, self._settled)

    def _settled(self, node: str) -> None:
        with self.lock:
            self.under_way[node] -= 1

    def _least_busy(self) -> str | None:
        import ray

        if self.judges is None:
            kind = "GPU" if self.device == "cuda" else "CPU"
            self.judges = {node["NodeID"]: int(node["Resources"].get(kind, 0))
                           for node in ray.nodes()
                           if node["Alive"] and node["Resources"].get(kind, 0) >= 1}
        if not self.judges:
            return None
        judges = self.judges
        return min(judges, key=lambda node: self.under_way.get(node, 0) / judges[node])

    def _start(self, node: str) -> Any:
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        host = ray.remote(BuildHost).options(
            num_cpus=0, max_concurrency=BUILD_CALLS,
            scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False),
        ).remote(self.settings, self.device, driver_niceness())
        self.hosts[node] = host
        return host

    def close(self) -> None:
        """Stop every node's builds; the actors' pools kill what still runs."""
        if not self.hosts:
            return
        import ray

        for host in self.hosts.values():
            with contextlib.suppress(Exception):
                ray.get(host.close.remote(), timeout=STOP_GRACE_S)
            with contextlib.suppress(Exception):
                ray.kill(host)
        self.hosts.clear()


class NodeBuild:
    """batch.RemoteBuild: one attempt's build on its node's build host, followed by a relay
    thread. Where the host fails, the build is `elsewhere`: the judge builds it itself."""

    def __init__(self, host: Any, node_id: str, case: Case, on_settled: Any):
        self.status = "pending"
        self.node_id: str | None = node_id
        self._host = host
        self._name = case.candidate.path.name if case.candidate else ""
        self._handed: tuple[Path, dict] | None = None
        problem = case.problem.path.read_text()
        candidate = case.candidate.path.read_text() if case.candidate else None
        threading.Thread(target=self._follow, args=(case, problem, candidate, on_settled),
                         name="kb-ray-build", daemon=True).start()

    def _follow(self, case: Case, problem: str, candidate: str | None, on_settled: Any) -> None:
        import ray

        try:
            for reference in self._host.build.remote(case, problem, candidate):
                message = ray.get(reference)
                if message[0] == "status":
                    self.status = message[1]
                elif message[0] == "done":
                    self._handed = (Path(message[1]), message[2])
                    self.status = message[2]["status"]
                else:  # nothing to build there
                    self.status = "none"
        except Exception:  # noqa: BLE001 - the host or its node died: the judge builds it
            pass
        finally:
            if self.status in ("pending", "running"):
                self.status = "elsewhere"
            on_settled(self.node_id)

    def handed(self) -> tuple[Path, dict] | None:
        return self._handed

    def drop(self) -> None:
        with contextlib.suppress(Exception):
            self._host.drop.remote(self._name)


class BuildHost:
    """The builds of one node (made a Ray actor by NodeBuilders): an open-ended pool on the
    node's cores, building into the node's build cache, where a judge of the node finds each
    build by its source and toolchain, as it finds a build of its own."""

    def __init__(self, settings: Settings, device: str, niceness: int):
        self.niceness = niceness
        sweep_scratch(Path(tempfile.gettempdir()))
        self.scratch = Path(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-"))
        candidates = self.scratch / "candidates"
        candidates.mkdir()
        self.settings = dataclasses.replace(settings, problems_dir=self.scratch / "problems",
                                            candidate_dirs=(candidates,))
        self.device = device
        self.pool = prebuild.OpenPool(self.settings, device, node_arch(device))
        self.folders: dict[str, Path] = {}  # candidate file -> its build's folder
        self.lock = threading.Lock()

    def build(self, case: Case, problem: str, candidate: str | None) -> Iterator[tuple]:
        """The build's status as it moves, then ("done", folder, entry); ("none",) where the
        candidate builds nothing on this node."""
        take_niceness(self.niceness)  # the actor's threads: the pool's thread is made in one
        here = write_files(self.scratch, case, problem, candidate)
        assert here.candidate is not None
        name = here.candidate.path.name
        try:
            wanted = builds.candidates_to_build([here], self.device)
            planned = builds.plan(list(wanted), self.settings.build_cache_root, self.pool.arch,
                                  wanted) if wanted else []
            if not planned:
                yield ("none",)
                return
            with self.lock:
                build = self.pool.add(planned[0])
                self.folders[name] = build.folder
            told = None
            while build.status in ("pending", "running"):
                if build.status != told:
                    told = build.status
                    yield ("status", told)
                time.sleep(BUILD_POLL_S)
            yield ("done", str(build.folder), build.entry())
        finally:
            self.folders.pop(name, None)
            here.candidate.path.unlink(missing_ok=True)

    def drop(self, name: str) -> None:
        """Take a cancelled attempt's build off the queue, where nobody started it."""
        with self.lock:
            folder = self.folders.get(name)
            if folder is not None:
                self.pool.drop(folder)

    def close(self) -> None:
        with self.lock:
            self.pool.close(stop=True)
        shutil.rmtree(self.scratch, ignore_errors=True)


def node_arch(device: str) -> str:
    """TORCH_CUDA_ARCH_LIST for a node's builds, read with no GPU of the build host's own:
    the node's setting, else its first GPU's compute capability as nvidia-smi reads it (what
    its judges build for), else none (the builds then choose, and a judge of another
    capability builds again)."""
    if not device.startswith("cuda") or os.environ.get("TORCH_CUDA_ARCH_LIST"):
        return builds.cuda_arch(device)  # the setting, or none off CUDA: no GPU asked
    try:
        found = subprocess.run(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
                               capture_output=True, text=True, timeout=30).stdout.split()
    except (OSError, subprocess.SubprocessError):
        return ""
    return found[0] if found else ""


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
