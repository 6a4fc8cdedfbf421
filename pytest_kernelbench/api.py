"""Evaluating candidates without pytest: the core the pytest items call, as a Python API.

    from pytest_kernelbench import Session, evaluate

    record = evaluate("problems/level1/19_ReLU.py", "attempt.py", device="cuda")

    with Session(device="cuda", trials=5) as session:  # workers and builds reused
        for source in attempts:
            record = session.evaluate("problems/level1/19_ReLU.py", source)

    with Session(device="cuda") as session:  # many at once: builds ahead, judges in parallel
        for index, record in session.evaluate_many([(problem, source) for source in attempts]):
            ...

`evaluate` judges in this process, one attempt at a time. `submit` (a Future of the record) and
`evaluate_many` hand attempts to the session's batch engine (engine/batch.py): their builds go
ahead in one pool on all cores, and `judges` processes judge them, sharing the device as the
workers of `pytest -n N` share it; at most `in_flight` attempts are unsettled at once (submit
blocks until one settles). With `cluster` ('ray', or a Ray address such as 'auto' or
'ray://host:10001'), every call is judged on a Ray cluster instead (engine/cluster.py): one
judge per GPU of the cluster, and a build pool on each judging node that builds ahead for its
judges; `evaluate` then waits for its record. See docs/api.md.

A problem or candidate is a file path or the Python source itself (text with a line break).
Each call judges a snapshot of the candidate taken when it is called, so an agent may rewrite
the same file between calls. Options are the fields of `settings.Settings` (p, trials, atol,
rtol, timeout_s, seed, mode, timing, confine, heartbeat_s, ...), checked as the plugin checks its
options: a bad value raises `SettingsError` (a ValueError) naming the option, in the words the
command line uses (`--kb-p: p must be >= 0 ...`); the returned record is the one
the JSON report holds (`docs/report-schema.md`).

Each stage says when it starts, every `heartbeat_s` (30 s) while it runs and how it ended: as
INFO records on the `pytest_kernelbench` logger, and to `on_progress(event)` when given (an
`heartbeat.Event`; a heartbeat comes from another thread). For a batch as a whole,
`on_counts(counts)` hears the `Counts` of submitted attempts queued, building, judging and
settled whenever they move (from the engine's thread); `counts()` reads them at any time.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import queue
import re
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from pytest_kernelbench.building import cores
from pytest_kernelbench.engine import cluster as ray_cluster
from pytest_kernelbench.engine.batch import Batch, Counts
from pytest_kernelbench.engine.judges import JUDGES_PER_GPU
from pytest_kernelbench.engine.judging import gpu_count, judge_case
from pytest_kernelbench.gpu import devices
from pytest_kernelbench.judge.evaluation import Evaluator
from pytest_kernelbench.record import Record
from pytest_kernelbench.reporting import heartbeat
from pytest_kernelbench.settings import Settings
from pytest_kernelbench.suite.discovery import Candidate, Case, Problem
from pytest_kernelbench.suite.manifest import Entry, load_manifest

SET_NAME = "api"
# Settings that only the pytest run uses (where files go, which problems it collects, what its
# terminal shows).
_RUN_ONLY = {"problems_dir", "candidate_dirs", "levels", "tags", "report_path", "costs_path",
             "compare_path", "shard", "resume_path", "feedback_dir", "plot_dir", "device",
             "summary_cases", "benchmark_table"}
OPTIONS = sorted(f.name for f in dataclasses.fields(Settings)
                 if f.init and f.name not in _RUN_ONLY)
IN_FLIGHT = 256  # unsettled attempts of submit before it blocks: an RL step's batch at most
_PROBLEM_FILE = re.compile(r"^(?P<id>\d+)_(?P<name>.+)\.py$")
_LEVEL_DIR = re.compile(r"^level(?P<level>\d+)$")


class Session:
    """Evaluates many candidates with one set of options, on one device (every GPU of the host
    for submit and evaluate_many on a plain 'cuda'), or on a Ray cluster (`cluster`)."""

    def __init__(self, device: str = "auto",
                 on_progress: Callable[[heartbeat.Event], None] | None = None,
                 judges: int | None = None, in_flight: int = IN_FLIGHT,
                 on_counts: Callable[[Counts], None] | None = None, cluster: str | None = None,
                 **options: Any):
        unknown = sorted(set(options) - set(OPTIONS))
        if unknown:
            raise TypeError(f"unknown option(s) {', '.join(unknown)}; "
                            f"known: {', '.join(OPTIONS)}")
        if judges is not None and judges < 1:
            raise ValueError(f"judges must be at least 1, got {judges}")
        if in_flight < 1:
            raise ValueError(f"in_flight must be at least 1, got {in_flight}")
        # Checked as the plugin checks its options (SettingsError) before anything is made.
        settings = Settings(problems_dir=Path("problems"), candidate_dirs=(), device=device,
                            report_path=None, **options)
        self.requested_device = device
        # On a cluster the cluster's judges say which device they use (its GPUs, else its CPUs).
        self._cluster = ray_cluster.connect(cluster, settings, device, judges) \
            if cluster is not None else None
        self.device = self._cluster.device if self._cluster else _resolve_device(device)
        try:
            cores.split_for(settings.build_cores, self.device)
        except cores.NoSplit as exc:
            raise ValueError(str(exc)) from None
        self._scratch = Path(tempfile.mkdtemp(prefix="kernelbench-api-"))
        # Candidates are snapshots in a folder of their own: confined, one cannot read another.
        self._candidates = self._scratch / "candidates"
        self._candidates.mkdir()
        self.settings = dataclasses.replace(settings, problems_dir=self._scratch / "problems",
                                            candidate_dirs=(self._candidates,))
        self._calls = 0
        self._numbering = threading.Lock()
        self._judges, self._in_flight = judges, in_flight
        self._batch: Batch | None = None
        self.on_progress, self.on_counts = on_progress, on_counts

    @functools.cached_property
    def evaluator(self) -> Evaluator:
        """The judge of `evaluate`, in this process (made at its first use)."""
        return Evaluator(self.settings, self.device)

    def evaluate(self, problem: str | Path, candidate: str | Path) -> Record:
        """The record of one candidate against one problem: compile, correctness and speed."""
        if self._cluster is not None:  # this host may have no GPU: judged where the rest is
            return self.submit(problem, candidate).result()
        case, overrides = self._prepare(problem, candidate)
        self.evaluator.overrides.update(overrides)
        return judge_case(self.evaluator, case, self.settings.heartbeat_s, self.on_progress)

    def submit(self, problem: str | Path, candidate: str | Path) -> Future:
        """A Future of the record of one candidate against one problem, judged by the batch
        engine. Blocks while `in_flight` attempts are unsettled. A bad file raises here."""
        return self._submit(*self._prepare(problem, candidate))

    def evaluate_many(self, pairs: Iterable[tuple[str | Path, str | Path]]
                      ) -> Iterator[tuple[int, Record]]:
        """(index of the pair, its record) for each (problem, candidate) pair, in the order the
        records settle. Every file is checked before any attempt starts; leaving the loop early
        cancels the attempts no judge took yet."""
        prepared = collections.deque(self._prepare(problem, candidate)
                                     for problem, candidate in pairs)
        count = len(prepared)
        settled: queue.Queue[tuple[int, Future | None]] = queue.Queue()
        # the futures not yet yielded, for the cancel at an early exit: a yielded one (and its
        # record) is the caller's alone, so a batch of any size holds no more than in_flight
        unsettled: dict[int, Future] = {}

        def submit_all() -> None:  # submit blocks at in_flight: the records flow meanwhile
            for index in range(count):
                try:  # each prepared case kept no longer than it waits
                    future = self._submit(*prepared.popleft())
                except RuntimeError:  # the session closed under the loop: none comes
                    for left in range(index, count):
                        settled.put((left, None))
                    return
                unsettled[index] = future
                future.add_done_callback(functools.partial(_arrived, settled, index))

        submitter = threading.Thread(target=submit_all, name="kb-submit", daemon=True)
        submitter.start()
        try:
            for _ in range(count):
                index, future = settled.get()
                unsettled.pop(index, None)
                if future is not None and not future.cancelled():
                    yield index, future.result()
        finally:
            for future in list(unsettled.values()):
                future.cancel()

    def counts(self) -> Counts:
        """How many of the submitted attempts are queued, building, judging and settled."""
        return self._batch.counts() if self._batch is not None else Counts(0, 0, 0, 0)

    def close(self) -> None:
        if self._batch is not None:
            self._batch.close()
        if "evaluator" in self.__dict__:
            self.evaluator.close()
        if self._cluster is not None:
            self._cluster.close()
        shutil.rmtree(self._scratch, ignore_errors=True)

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _submit(self, case: Case, overrides: dict[tuple[int, int], Entry]) -> Future:
        """Hand a prepared case to the batch engine; its snapshot goes once it settled."""
        snapshot = case.candidate.path if case.candidate else None
        return self._engine().submit(_number(case), case, overrides,
                                     functools.partial(_remove, snapshot))

    def _engine(self) -> Batch:
        if self._batch is None and self._cluster is not None:
            self._batch = Batch(self.settings, self.device, self._cluster.judges, 1,
                                self._in_flight, self.on_progress, self.on_counts,
                                new_judge=self._cluster.judge, build_on=self._cluster.build)
        if self._batch is None:
            gpus = gpu_count(self.requested_device, self.device)
            judges = self._judges or (JUDGES_PER_GPU * gpus if self.device.startswith("cuda")
                                      else 1)
            self._batch = Batch(self.settings, self.device, judges, gpus, self._in_flight,
                                self.on_progress, self.on_counts)
        return self._batch

    def _prepare(self, problem: str | Path, candidate: str | Path
                 ) -> tuple[Case, dict[tuple[int, int], Entry]]:
        """The case of one attempt: the problem's file, a snapshot of the candidate taken now,
        and the tolerances a suite's manifest sets for the problem."""
        with self._numbering:
            self._calls += 1
            number = self._calls
        sample = f"a{number}"
        problem_path = self._problem_file(problem, number)
        level, problem_id, name = identify(problem_path)
        # A problem of a suite with a manifest keeps the tolerances the manifest sets for it.
        entries = load_manifest(problem_path.parent.parent)
        overrides = {key: entries[key] for key in [(level, problem_id)] if key in entries}
        snapshot = self._candidates / f"{sample}.py"
        snapshot.write_text(_source_of(candidate, "candidate"))
        case = Case(Problem(level, problem_id, name, problem_path), SET_NAME, sample,
                    Candidate(SET_NAME, level, problem_id, sample, snapshot))
        return case, overrides

    def _problem_file(self, problem: str | Path, number: int) -> Path:
        if isinstance(problem, Path) or "\n" not in problem:
            path = Path(problem).expanduser().resolve()
            if not path.is_file():
                raise FileNotFoundError(f"problem: no such file: {problem}")
            return path
        folder = self._scratch / "problems" / "level0"  # a source: level 0, id from the call
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{number}_problem.py"
        path.write_text(problem)
        return path


def evaluate(problem: str | Path, candidate: str | Path, device: str = "auto",
             on_progress: Callable[[heartbeat.Event], None] | None = None,
             **options: Any) -> Record:
    """One candidate's record, in a session of its own (see Session for many)."""
    with Session(device, on_progress, **options) as session:
        return session.evaluate(problem, candidate)


def identify(path: Path) -> tuple[int, int, str]:
    """(level, id, name) from level<L>/<id>_<Name>.py; level and id 0 where the path says none."""
    file = _PROBLEM_FILE.match(path.name)
    folder = _LEVEL_DIR.match(path.parent.name)
    level = int(folder["level"]) if folder else 0
    if file:
        return level, int(file["id"]), file["name"]
    return level, 0, path.stem


def _source_of(candidate: str | Path, what: str) -> str:
    if isinstance(candidate, str) and "\n" in candidate:
        return candidate
    path = Path(candidate).expanduser()
    if not path.is_file():
        raise FileNotFoundError(f"{what}: no such file: {candidate}")
    return path.read_text()


def _arrived(settled: queue.Queue, index: int, future: Future) -> None:
    """A future's done-callback: its pair's index and itself, in the order they settle."""
    settled.put((index, future))


def _number(case: Case) -> int:
    """An attempt's number in its session, from its sample name ('a7' -> 7)."""
    return int(case.sample.removeprefix("a"))


def _remove(path: Path | None) -> None:
    """A settled attempt's snapshot: a session's disk stays flat over many attempts."""
    if path is not None:
        path.unlink(missing_ok=True)


def _resolve_device(requested: str) -> str:
    try:
        return devices.resolve_device(requested)
    except devices.DeviceUnavailable as exc:
        raise ValueError(f"device {exc}") from None
