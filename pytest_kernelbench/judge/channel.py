"""One channel to the candidate's worker: the requests a stage sends, each bounded by what is
left of the stage's --kb-timeout (one clock, `Deadline`), each charged to the record."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from pytest_kernelbench.building import builds, pch
from pytest_kernelbench.isolation import wire
from pytest_kernelbench.isolation.sandbox import Fault, Reply, Sandbox
from pytest_kernelbench.record import Record, charge, note_started
from pytest_kernelbench.settings import Settings
from pytest_kernelbench.suite.discovery import Case

SHORTEST_WAIT_S = 0.001  # a request past the deadline still gets this long to answer


class Deadline:
    """When the running stage's --kb-timeout runs out: the one clock every request of the stage
    (its trials, its timing, Nsight Compute) reads what is left of."""

    def __init__(self) -> None:
        self.at = float("inf")

    def left_s(self) -> float:
        """Seconds left, never less than SHORTEST_WAIT_S."""
        return max(self.at - time.monotonic(), SHORTEST_WAIT_S)

    def extend(self, seconds: float) -> None:
        self.at += seconds

    @contextlib.contextmanager
    def running(self, timeout_s: float) -> Iterator[None]:
        """A stage's own timeout_s; a stage that ran inside another (an earlier stage run first)
        gives the outer one its time back."""
        began = time.monotonic()
        outer, self.at = self.at, began + timeout_s
        try:
            yield
        finally:
            self.at = outer + (time.monotonic() - began)


class WorkerChannel:
    """Requests to the candidate's worker, as the judge sends them (the typed requests of
    isolation/wire.py), each carrying the case's `loading`."""

    def __init__(self, sandbox: Sandbox, settings: Settings, device: str, arch: str,
                 keeps_state: Callable[[], bool], started_s: float):
        self.sandbox = sandbox
        self.started_s = started_s  # builds made since then are this run's
        self.settings = settings
        self.device = device
        self.arch = arch
        self.keeps_state = keeps_state  # the reference's lockstep twin is in use
        self.deadline = Deadline()
        self._envs: dict[Path, dict[str, str]] = {}  # candidate file -> its build environment

    @property
    def order_trials(self) -> bool:
        """Whether the stream-order trials run (--kb-order-trials, on a CUDA device)."""
        return self.settings.order_trials and self.device.startswith("cuda")

    @property
    def build_cache(self) -> Path:
        return self.settings.build_cache_root

    def ask(self, record: Record, request: wire.CandidateRequest) -> Reply | Fault:
        """One request; its wall time is charged to the record, and time the worker was stopped
        for others' timings is given back to the stage."""
        started = time.perf_counter()
        reply = self.sandbox.request(request, self.deadline.left_s())
        stopped_s = self.sandbox.stopped_s
        charge(record, request.op, time.perf_counter() - started - stopped_s)
        note_started(record, self.sandbox.started)
        if stopped_s:
            self.deadline.extend(stopped_s)
            charge(record, "stopped", stopped_s)
        return reply

    def loading(self, case: Case) -> wire.Loading:
        """What every request about the case carries: the candidate, and the run's settings
        its worker loads it under."""
        assert case.candidate is not None
        return wire.Loading(
            problem=str(case.problem.path), candidate=str(case.candidate.path),
            seed=self.settings.seed, device=self.sandbox.worker_device,
            mode=self.settings.mode, precision=self.settings.precision,
            tf32=self.settings.tf32, order_trials=self.order_trials,
            lockstep=self.keeps_state(), env=self.candidate_env(case))

    def candidate_env(self, case: Case) -> dict[str, str]:
        """The candidate's own extension folder in the build cache (see builds.py), and the
        run's precompiled headers where it has them (pch.py), for a build left to its item."""
        assert case.candidate is not None
        path = case.candidate.path
        if path not in self._envs:  # read and hashed once, not on every request
            source = path.read_bytes()
            folder = builds.build_folder(self.build_cache, source, builds.toolchain(self.arch))
            env = builds.build_env(folder, self.arch)
            headers = self.build_cache / builds.HEADERS_FOLDER
            if self.settings.build_headers and headers.is_dir() and \
                    builds.needs_build(source.decode(errors="replace")):
                env[pch.ROOT_ENV] = str(headers)
            self._envs[path] = env
        return self._envs[path]

    def build_folder(self, case: Case) -> Path:
        return Path(self.candidate_env(case)["TORCH_EXTENSIONS_DIR"])

    def device_aside(self) -> AbstractContextManager[Any]:
        """The running stage's device hold stepped aside, for a wait that needs no GPU."""
        hold = self.sandbox.hold
        return hold.stepped_aside() if hold is not None else contextlib.nullcontext()

    def let_timings_in(self, record: Record | None) -> None:
        """The timings that wait for the device run now, before the stage's next piece of GPU
        work: they would wait for the whole stage otherwise, with every other worker stopped
        behind them (level 3's problem traits held 33 s of a CUDA-L1 run that way,
        docs/performance.md)."""
        waited = self.sandbox.let_timings_in()
        if waited and record is not None:
            charge(record, "stopped", waited)
