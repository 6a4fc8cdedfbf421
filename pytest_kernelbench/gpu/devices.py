"""Which device each pytest(-xdist) process uses, and the per-device lock that keeps timing alone.

With `pytest -n N`, worker gwK takes GPU K mod (number of GPUs), so N workers spread over every
GPU of the host. The pytest process makes that GPU its current device, and its sandbox workers
see that GPU alone (as their cuda:0), so nothing a case creates -- context, streams, events,
allocations -- can land on another GPU. Every stage holds its device's lock: compile and
correctness share it, timing holds it alone, so no measurement ever overlaps other work on that
device. Timings gather before the device is drained for them (TimingRequest, gate_is_closed).
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import os
import re
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

WORKER_ID = re.compile(r"^gw(\d+)$")


def bind_device(device: str, worker_id: str | None, device_count: int) -> str:
    """The device for one process: a plain 'cuda' becomes cuda:K for xdist worker gwK."""
    if device != "cuda" or worker_id is None or device_count < 1:
        return device
    match = WORKER_ID.match(worker_id)
    if not match:
        return device
    return f"cuda:{int(match.group(1)) % device_count}"


def visible_gpus() -> int:
    """How many CUDA devices this process sees (0 without CUDA)."""
    import torch

    return torch.cuda.device_count()


def cuda_index(device: str) -> int:
    """'cuda:3' -> 3, 'cuda' -> 0."""
    return int(device.partition(":")[2] or 0)


def visible_id(device: str, visible: str | None) -> str:
    """How CUDA_VISIBLE_DEVICES names this process's cuda:N: the Nth entry of the variable when
    it is set (an index, a UUID or a MIG id), else N itself."""
    index = cuda_index(device)
    entries = [v.strip() for v in (visible or "").split(",") if v.strip()]
    if visible is not None and index < len(entries):
        return entries[index]
    return str(index)


def worker_env(device: str) -> dict[str, str]:
    """Environment for the sandbox workers of a process on `device`: a CUDA device is the only
    one they see, so a candidate's `.cuda()`, `device='cuda'` or `cuda:0` lands on it too."""
    if not device.startswith("cuda"):
        return {}
    return {"CUDA_VISIBLE_DEVICES": visible_id(device, os.environ.get("CUDA_VISIBLE_DEVICES"))}


def worker_device(device: str) -> str:
    """The name a sandbox worker (see worker_env) knows this process's device by."""
    return "cuda:0" if device.startswith("cuda") else device


class DeviceUnavailable(ValueError):
    """A requested device this host does not have."""


def resolve_device(requested: str, worker_id: str | None = None) -> str:
    """The device a process runs on: 'auto' as CUDA where there is one, else the CPU; a plain
    'cuda' bound to xdist worker worker_id's GPU (bind_device). DeviceUnavailable, saying what
    the host has, where it lacks the requested device."""
    import torch

    if requested == "auto":
        requested = "cuda" if torch.cuda.is_available() else "cpu"
    if requested.startswith("cuda"):
        if not torch.cuda.is_available():
            raise DeviceUnavailable(f"{requested}: no CUDA device is available")
        index = int(requested.partition(":")[2] or 0)
        if index >= torch.cuda.device_count():
            raise DeviceUnavailable(f"{requested}: only {torch.cuda.device_count()} CUDA device(s)")
        return bind_device(requested, worker_id, torch.cuda.device_count())
    return requested


@functools.cache
def driver_version() -> str | None:
    """The NVIDIA driver's version as nvidia-smi reports it; None without one."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=10, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return out.strip().splitlines()[0] if out.strip() else None


def use_device(device: str) -> None:
    """Make a CUDA device this process's current one, so that streams, events, graphs and the
    profiler made without an explicit device (here or in a problem's code) land on it."""
    if device.startswith("cuda"):
        import torch

        torch.cuda.set_device(cuda_index(device))


def lock_path(device: str) -> Path:
    """One lock file per physical device on this host (CUDA_VISIBLE_DEVICES taken into account):
    'cuda' and 'cuda:0' are one GPU, so a run on one and a run on the other (a plain run beside
    an xdist run) share its lock."""
    name = device.replace(":", "")
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if device.startswith("cuda"):
        name = f"cuda{cuda_index(device)}" if visible is None \
            else f"cuda-visible-{visible_id(device, visible)}"
    return Path(tempfile.gettempdir()) / f"pytest-kernelbench-{name}.lock"


_HOLDS = threading.local()  # how many device locks this thread holds (nested stages)
# A timing waits this long after taking the device, so that the run's compilers, which look
# every QUIET_POLL_S, have paused before its first call. Only while compilers may run
# (compilers_may_run): the wait was most of the idle time between holds in a warm run.
QUIET_POLL_S = 0.02
QUIET_SETTLE_S = 0.06


def holding_a_device() -> bool:
    """Whether this thread already holds a device lock (a stage nested in another)."""
    return getattr(_HOLDS, "depth", 0) > 0


def timing_marker() -> Path:
    """One file per host, held (shared) by every timing in progress on any of its devices."""
    return Path(tempfile.gettempdir()) / "pytest-kernelbench-timing.lock"


def timing_in_progress() -> bool:
    """Whether a process of this host is timing now. The run's compilers (the build pool's,
    and those a worker runs while its stage stepped aside) pause meanwhile: they share the
    host's cores and memory with the process that launches the timed calls, and timings
    beside them were disturbed more often (launch-bound baselines read up to 4.5 times their
    time in another run, docs/performance.md)."""
    with open(timing_marker(), "a+") as handle:
        return _locked_elsewhere(handle)


@contextlib.contextmanager
def _timing() -> Iterator[None]:
    with open(timing_marker(), "a+") as marker:
        fcntl.flock(marker, fcntl.LOCK_SH)
        if compilers_may_run():
            time.sleep(QUIET_SETTLE_S)
        yield


def compilers_marker() -> Path:
    """One file per host, held (shared) by each build pool with builds queued or running and
    by each stage stepped aside for its worker's compiler (announce_compilers)."""
    return Path(tempfile.gettempdir()) / "pytest-kernelbench-compilers.lock"


def announce_compilers():
    """An open file that says, until it is closed, that compilers of this run may be running.
    Taken before any compiler starts, so a timing that finds no such file needs no pause."""
    handle = open(compilers_marker(), "a+")
    fcntl.flock(handle, fcntl.LOCK_SH)
    return handle


def compilers_may_run() -> bool:
    with open(compilers_marker(), "a+") as handle:
        return _locked_elsewhere(handle)


class DeviceHold:
    """A held device lock that can step aside while its holder's worker does no GPU work (it
    waits on a compiler, or is stopped between two requests while a timing waits) and step
    back before that worker goes on. Only shared holds step aside: a timing keeps the device
    even while its candidate compiles."""

    def __init__(self, handle, path: Path, mode: int, outermost: bool):
        self._handle, self._path, self._mode = handle, path, mode
        self.outermost = outermost  # a nested hold shares its lock with the one around it
        self.held = True
        self.aside: list[list[float]] = []  # [from, to] wall-clock spans stepped aside
        self.busy = False  # a timing's GPU did not go idle (device_lock's idle_first)

    def step_aside(self) -> bool:
        """Let the lock go; only a shared hold does (a timing keeps the device to itself)."""
        if not (self.outermost and self.held and self._mode == fcntl.LOCK_SH):
            return False
        self.aside.append([round(time.time(), 6)])  # before another holder can come in
        fcntl.flock(self._handle, fcntl.LOCK_UN)
        self.held = False
        return True

    def timing_waits(self) -> bool:
        """Whether timings wait for the device this hold could let go of (the gate is closed):
        a shared hold lets them in between two requests of its worker, so that they wait for
        one request, not for a whole stage of every other worker."""
        if not (self.outermost and self.held and self._mode == fcntl.LOCK_SH):
            return False
        return gate_closed(self._path)

    def step_back(self) -> None:
        if self.held:
            return
        _take(self._handle, self._path, self._mode)
        self.held = True
        self.aside[-1].append(round(time.time(), 6))

    @contextlib.contextmanager
    def stepped_aside(self) -> Iterator[None]:
        """Let the lock go for the block (if this hold can), and take it back after."""
        stepped = self.step_aside()
        try:
            yield
        finally:
            if stepped:
                self.step_back()


def _take(handle, path: Path, mode: int) -> None:
    if mode == fcntl.LOCK_SH:
        _wait_for_timings(path)
    with open(path.with_suffix(".turnstile"), "a+") as turnstile:
        fcntl.flock(turnstile, mode)
        fcntl.flock(handle, mode)


def _take_for_timing(handle, path: Path, request: TimingRequest) -> None:
    """Take the device alone, once the gate closes: until then the timing waits while shared
    work goes on, and takes the device at once only if nobody holds it."""
    while not gate_closed(path):
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            time.sleep(QUIET_POLL_S)
            continue
        request.queue()  # holds the device: shared work that asks now waits at the gate
        return
    request.queue()
    _take(handle, path, fcntl.LOCK_EX)


# Draining the device for a timing costs every other worker of the device the rest of its
# current request (1.6 s a drain on average in a CUDA-L1 run at -n 8, where 1.8 timings ran
# per drain; docs/performance.md, "The timing gate"), so timings gather first: the gate closes
# when `batch` of them wait, or the oldest has waited GATHER_S, and stays closed while any of
# them is queued or timing. A timing waiting to gather costs its own worker alone.
GATHER_S = 3.0


class TimingRequest:
    """One timing's ask for a device, visible to every process of the host: a file in the
    device's `.pending` folder that holds when it asked (0 once it is queued for the device
    or holds it) and the batch it gathers for, locked by its owner so a killed owner's file is
    known stale."""

    def __init__(self, path: Path, batch: int):
        folder = _pending_folder(path)
        folder.mkdir(exist_ok=True)
        # Made beside the folder and moved in once locked and written: a reader never finds
        # it unlocked (and drops it as stale) or empty.
        self._file = tempfile.NamedTemporaryFile(dir=folder.parent, prefix=f".{folder.name}-",
                                                 delete=False)
        fcntl.flock(self._file, fcntl.LOCK_EX)
        self.batch = max(1, batch)
        self._write(time.time())
        self.path = folder / f"{os.getpid()}-{Path(self._file.name).name}"
        os.rename(self._file.name, self.path)

    def _write(self, asked: float) -> None:
        # one write of a fixed width, in place: a reader never sees it half written
        os.pwrite(self._file.fileno(), f"{asked:20.6f} {self.batch:6d}".encode(), 0)

    def queue(self) -> None:
        self._write(0.0)

    def close(self) -> None:
        self.path.unlink(missing_ok=True)
        self._file.close()


def _pending_folder(path: Path) -> Path:
    return path.with_suffix(".pending")


def pending_timings(path: Path) -> list[tuple[float, int]]:
    """(asked, batch) of each timing that waits for or holds the device; stale requests (their
    owner is gone) are removed."""
    found = []
    folder = _pending_folder(path)
    for entry in folder.iterdir() if folder.is_dir() else ():
        try:
            with open(entry) as handle:
                if not _locked_elsewhere(handle, fcntl.LOCK_SH):
                    entry.unlink(missing_ok=True)  # its owner died without closing it
                    continue
                asked, batch = handle.read().split()
        except (OSError, ValueError):  # gone meanwhile, or being written
            continue
        found.append((float(asked), int(batch)))
    return found


def gate_is_closed(pending: list[tuple[float, int]], now: float,
                   gather_s: float = GATHER_S) -> bool:
    """Whether shared work waits for the timings `pending` lists: one of them is queued or
    holds the device (asked 0), enough of them wait, or the oldest has waited long enough."""
    if not pending:
        return False
    oldest = min(asked for asked, _ in pending)
    return oldest == 0.0 or len(pending) >= min(batch for _, batch in pending) \
        or now - oldest >= gather_s


def gate_closed(path: Path) -> bool:
    return gate_is_closed(pending_timings(path), time.time(), GATHER_S)


def timing_batch(workers: int, gpus: int) -> int:
    """How many timings of one device gather before it drains for them: half of the workers
    that share it (one worker: each timing at once)."""
    per_device = -(-max(1, workers) // max(1, gpus))
    return max(1, per_device // 2)


def _locked_elsewhere(handle, mode: int = fcntl.LOCK_EX) -> bool:
    """Whether another open file (another process, or another open here) holds a lock on
    this one that `mode` conflicts with."""
    try:
        fcntl.flock(handle, mode | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    fcntl.flock(handle, fcntl.LOCK_UN)
    return False


# With --kb-drain=stop a timing takes its GPU while other workers' candidates are stopped in
# mid-request, with work of theirs perhaps still queued on it: it waits until a call of its own
# comes back as fast as only an idle GPU answers (another process's kernels get the GPU until
# their time slice ends), IDLE_ROUNDS times in a row.
IDLE_ROUND_TRIP_S = 200e-6
IDLE_ROUNDS = 3
IDLE_TIMEOUT_S = 10.0


def wait_for_idle(device: str, timeout_s: float = IDLE_TIMEOUT_S) -> bool:
    """Whether the GPU went idle within timeout_s (a CPU device is idle at once)."""
    if not device.startswith("cuda"):
        return True
    import torch

    probe = torch.zeros(1, device=device)
    torch.cuda.synchronize(device)
    deadline, quiet = time.monotonic() + timeout_s, 0
    while quiet < IDLE_ROUNDS:
        if time.monotonic() > deadline:
            return False
        began = time.perf_counter()
        probe.add_(1)
        torch.cuda.synchronize(device)
        quiet = quiet + 1 if time.perf_counter() - began < IDLE_ROUND_TRIP_S else 0
    return True


def _wait_for_timings(path: Path) -> None:
    """Return once the timing gate is open: shared work queues behind the timings that
    gathered before it, so they run back to back instead of each waiting for its own drain."""
    while gate_closed(path):
        time.sleep(QUIET_POLL_S)


@contextlib.contextmanager
def device_lock(device: str, exclusive: bool, batch: int = 1,
                idle_first: bool = False) -> Iterator[DeviceHold]:
    """Hold the device's lock: shared for ordinary work, exclusive for timing.

    A timing first gathers with others (TimingRequest, gate_is_closed: up to `batch` of them,
    for at most GATHER_S) while shared work goes on; then the gate closes and the device
    drains once for all of them. A turnstile in front keeps timing from starving: flock lets
    new shared holders in while an exclusive one waits, so with a few workers compiling and
    checking in turns a timing could wait a minute for a moment when none held it. Whoever asks
    takes the turnstile first (the timing holds it while it waits), so work that comes after a
    queued timing queues behind it. Shared work also waits while the gate is closed
    (_wait_for_timings), so the timings that gathered all run before the next shared work. A
    hold nested in one already held here skips all of this: waiting there while holding the
    lock would never end. An exclusive hold also marks the host as timing
    (timing_in_progress) and gives the run's compilers QUIET_SETTLE_S to pause; with
    idle_first it then waits for the GPU to go idle (wait_for_idle; `busy` says it did not).
    """
    depth = getattr(_HOLDS, "depth", 0)
    mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
    path = lock_path(device)
    request = TimingRequest(path, batch) if exclusive and not depth else None
    with contextlib.closing(request) if request else contextlib.nullcontext(), \
            open(path, "a+") as handle:
        if depth:
            fcntl.flock(handle, mode)
        elif request is not None:
            _take_for_timing(handle, path, request)
        else:
            _take(handle, path, mode)
        _HOLDS.depth = depth + 1
        hold = DeviceHold(handle, path, mode, outermost=not depth)
        try:
            with _timing() if exclusive and not depth else contextlib.nullcontext():
                if idle_first and exclusive and not depth:
                    hold.busy = not wait_for_idle(device)
                yield hold
        finally:
            _HOLDS.depth = depth
            fcntl.flock(handle, fcntl.LOCK_UN)
