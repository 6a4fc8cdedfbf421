"""The pytest side of the sandbox: a fresh worker process per candidate, forked from a zygote.

The zygote (worker.zygote) imports torch once; every candidate then runs in its own forked
child, so nothing one candidate patches, builds or breaks reaches the next. A request that the
child does not answer in time, or that kills it, becomes a Fault for that request alone.
"""

from __future__ import annotations

import dataclasses
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_kernelbench import confine, faults
from pytest_kernelbench.building import builds, cores, pch
from pytest_kernelbench.gpu import devices
from pytest_kernelbench.isolation import wire
from pytest_kernelbench.suite import loading

LOG_TAIL_BYTES = 2000
# Starting the zygote (interpreter plus `import torch`) or a child is charged to no candidate.
STARTUP_TIMEOUT_S = 120.0


@dataclass
class Fault:
    """A request that failed: status is a word from faults, message one line, details free text."""

    status: str
    message: str
    details: str = ""


@dataclass
class Reply:
    header: dict
    value: Any = None  # the decoded "output", when the reply has one
    wall_s: float = 0.0
    extra: dict = field(default_factory=dict)  # other decoded values, by header key
    log: str = ""  # what the worker printed while answering (e.g. a failed build's compiler)


# Processes a worker starts to build an extension or a JIT kernel: while one runs, the worker
# waits on it (cpp_extension and Triton build synchronously) and runs nothing on the GPU.
COMPILERS = frozenset({"ninja", "nvcc", "cicc", "ptxas", "cudafe++", "fatbinary", "nvlink",
                       "c++", "g++", "gcc", "cc", "cc1", "cc1plus", "clang", "clang++", "ld",
                       "ld.bfd", "ld.gold", "collect2", "as"})
BUILD_POLL_S = 0.1  # how often a waiting request looks for a compiler under its worker
# Requests whose worker may be stopped in mid-request for a timing (--kb-drain=stop): a load,
# a correctness trial and a kernel attribution, which times nothing (and a new worker's start,
# _start_child). A timing's own requests hold the device alone. Left to run through, the
# attributions' profiler sessions (up to 6 s) held the device for 63 s of a CUDA-L1 run's
# 347 s with every other worker stopped behind them (docs/performance.md).
STOPPABLE = frozenset({"load", "run", "profile"})


def compiling(root: int) -> bool:
    """Whether a compiler runs among the descendants of process `root` (Linux /proc)."""
    below, seen = [root], set()
    while below:
        pid = below.pop()
        if pid in seen:
            continue
        seen.add(pid)
        if pid != root and _process_name(pid) in COMPILERS:
            return True
        below.extend(_children(pid))
    return False


def _process_name(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm") as handle:
            return handle.read().strip()
    except OSError:
        return ""


def _children(pid: int) -> list[int]:
    """The processes each thread of `pid` started (/proc/PID/task/TID/children)."""
    found: list[int] = []
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in threads:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as handle:
                found += [int(child) for child in handle.read().split()]
        except OSError:
            continue
    return found


def seconds(value: float) -> str:
    """A limit as people write it: 300, 12, 2.5 (what is left of a stage's limit is rounded)."""
    return f"{value:.0f}" if value >= 10 else f"{value:.2g}"


def violation(attempts: list[str], confinement: str) -> Fault:
    """The verdict on a candidate that tried what its confinement refuses."""
    how = "refused" if not confinement.startswith("none") else "not prevented: unconfined"
    more = f" (and {len(attempts) - 1} more)" if len(attempts) > 1 else ""
    return Fault(faults.SANDBOX_VIOLATION,
                 f"candidate tried to {attempts[0]}{more}; {how} ({confinement})",
                 "attempts:\n" + "\n".join(f"  {attempt}" for attempt in attempts))


def decode_reply(reply: dict, payload: memoryview, device: str = "cpu") -> tuple[Any, dict]:
    """The values a reply carries, decoded in the order the worker encoded them; tensors shared
    over CUDA IPC are opened on `device`, this process's name for the worker's GPU."""
    cuda = devices.cuda_index(device) if device.startswith("cuda") else None
    cursor = [0]

    def decode(tree: dict) -> Any:
        return wire.decode_value(tree, payload, cursor, cuda)

    value = decode(reply["output"]) if "output" in reply else None
    extra: dict = {}
    if "inputs_after" in reply:
        extra["inputs_after"] = decode(reply["inputs_after"])
    if "timed_outputs" in reply:
        extra["timed_outputs"] = [decode(item["output"]) for item in reply["timed_outputs"]]
    return value, extra


class Sandbox:
    """Runs each candidate in a worker of its own. With confine_mode auto or require, each
    worker is confined (confine.py) before it imports the candidate: it reads only what it
    needs, writes only its scratch and build folders, and may not read `protected` folders."""

    def __init__(self, env: dict[str, str] | None = None, device: str = "cpu",
                 confine_mode: str = "off", protected: tuple[Path, ...] = (),
                 stops_for_timings: bool = False):
        self.env = {**os.environ, **(env or {}), **devices.worker_env(device)}
        self.device = device
        self.confine_mode = confine_mode
        self.protected = list(protected)
        self.scratch: Path | None = None  # the current worker's own writable folder
        self.confinement = "none"  # what the current worker entered, in words
        self.worker_device = devices.worker_device(device)  # the same GPU, as the worker names it
        self.worker_gpu: str | None = None  # the GPU UUID the current worker reports
        self.log = tempfile.NamedTemporaryFile(prefix="kb-worker-", suffix=".log", delete=False)
        self.zygote: subprocess.Popen | None = None
        self.control: socket.socket | None = None
        self.child_pid: int | None = None
        self.child_key: tuple | None = None
        self.to_child = self.from_child = -1
        self.cuda_ipc = False  # probed per child: outputs then skip the trip through host memory
        # The device lock the running stage holds (set by the evaluator), stepped aside while
        # the worker waits on a compiler: on a GPU only, where a timing runs on the device and
        # not on the cores a compiler takes.
        self.hold: devices.DeviceHold | None = None
        self.steps_aside = device.startswith("cuda")
        self._quieted = False  # its worker stopped, stepped aside, while a timing runs
        self._compilers = None  # devices.announce_compilers, while stepped aside for them
        # --kb-drain=stop: a request in progress does not hold up a timing; its worker is
        # stopped where it is until the timings ran (_stop_for_timings), and stopped_s says for
        # how long in the last request, which its deadlines give back.
        self.stops_for_timings = stops_for_timings
        self.stopped_s = 0.0
        self._paused = False  # its worker stopped between stages (pause)
        self.start_s = 0.0  # how long the last request waited for a new worker to start
        self.start_parts: dict[str, float] = {}  # of which: confinement, CUDA context and check
        # (problem, candidate) and what the worker reported refusing, in answer to a release
        self.unreported: tuple[tuple | None, list[str]] | None = None
        self.oom_peak_bytes: int | None = None  # a worker's peak, when it ran out of memory
        # --kb-build-cores=split: the cores the worker's process starts on (the zygote's), and
        # those its main thread runs on now (a timing's reserved ones while it times)
        self.shared_cores: frozenset[int] | None = None
        self.worker_cores: frozenset[int] | None = None
        # The commands the worker and its children started during the last request (and
        # before it, since the release that ended the stage before), for the record
        self.started: list[str] = []
        self._started_since_release: tuple[tuple | None, list[str]] = (None, [])

    def request(self, request: wire.CandidateRequest, timeout_s: float) -> Reply | Fault:
        """Send one request to the candidate's worker and wait at most timeout_s for its reply.
        Raises wire.BadRequest where the worker refuses it (a mistake of the harness)."""
        key = (request.loading.problem, request.loading.candidate)
        self.start_s, self.start_parts, self.stopped_s = 0.0, {}, 0.0  # of this request alone
        (of, before), self._started_since_release = self._started_since_release, (None, [])
        self.started = before if of == key else []
        if self.unreported is not None:  # said at the candidate's next request, if any
            (of, attempts), self.unreported = self.unreported, None
            if of == key:
                self.stop_child()
                return violation(attempts, self.confinement)
        self.let_timings_in()
        self._resume()
        if self.child_pid is None or key != self.child_key:
            self.stop_child()
            began = time.perf_counter()
            started = self._start_child(request.loading)  # on a GPU: its CUDA context too
            self.start_s = time.perf_counter() - began - self.stopped_s  # not others' timings
            if isinstance(started, Fault):
                return started
            self.child_key = key
            # a new worker's start (its context, its confinement) is a request of its own
            self.let_timings_in()
            self._resume()
        log_start = self._log_size()
        started_s = time.perf_counter()
        try:
            if isinstance(request, (wire.Run, wire.Time)):
                request = dataclasses.replace(request, cuda_ipc=self.cuda_ipc)
            wire.write_message(self.to_child, wire.encode_request(request))
            # A stream-order trial is left to run through: stopped halfway, its work would
            # meet its inputs in another order than the trial sets up.
            ordered = isinstance(request, wire.Run) and request.order
            if not self._wait_readable(timeout_s, stoppable=request.op in STOPPABLE
                                       and not ordered):
                self.stop_child()
                return Fault(faults.TIMEOUT, f"no answer within {seconds(timeout_s)} s (--kb-timeout); "
                             "the worker was killed", self._log_since(log_start))
            reply, payload = wire.read_message(self.from_child)
        except (EOFError, OSError):
            return self._lost(log_start)
        wall_s = time.perf_counter() - started_s
        if "refused" in reply:
            raise wire.BadRequest(f"the worker refused a {request.op} request: "
                                  f"{reply['refused']}")
        self.started = [*self.started, *(reply.get("started") or [])]
        if reply.get("attempts"):
            self.stop_child()  # the verdict is settled; nothing more of it runs
            return violation(reply["attempts"], self.confinement)
        if not reply.get("ok"):
            if reply.get("status") == faults.CUDA_ERROR:
                self.stop_child()  # a CUDA error poisons the context for every later request
            if reply.get("status") == faults.OUT_OF_MEMORY:
                self.oom_peak_bytes = reply.get("peak_bytes")
            log = self._log_since(log_start)
            details = (reply.get("details") or "") + (f"\n--- worker output ---\n{log}" if log else "")
            return Fault(reply.get("status", faults.RUNTIME_ERROR), reply.get("error", ""), details)
        try:
            value, extra = decode_reply(reply, payload, self.device)
        except (ValueError, RuntimeError, KeyError, TypeError) as exc:
            return Fault(faults.STRUCTURE_MISMATCH, f"unreadable output: {exc}")
        return Reply(reply, value, wall_s, extra, self._log_since(log_start))

    def pin_worker(self, worker_cores: frozenset[int]) -> None:
        """The worker's main thread (it launches the timed calls) onto these cores, now and for
        a worker started later."""
        self.worker_cores = worker_cores
        if self.child_pid is not None:
            cores.pin_process_thread(self.child_pid, worker_cores)

    def pause(self) -> None:
        """Stop the worker (and what it started) until its next request: between two stages
        nothing of the candidate's -- a thread it left running -- may run beside another
        case's timing."""
        if self.child_pid is not None and not self._paused:
            self._paused = self._signal_child(signal.SIGSTOP)

    def _resume(self) -> None:
        if self._paused:
            self._signal_child(signal.SIGCONT)
            self._paused = False

    def let_timings_in(self) -> float:
        """Between two requests of a shared stage (or two pieces of the stage's own GPU work in
        this process) a timing that waits for the device takes it first, the worker stopped
        meanwhile: a timing then waits for one request of each other stage, not for the whole
        of it. Returns the seconds it stood aside."""
        if self.hold is None or not self.hold.timing_waits():
            return 0.0
        began = time.monotonic()
        self.pause()
        loading.synchronize(self.device)  # what this process queued is done before it goes
        self.hold.step_aside()
        self.hold.step_back()
        return time.monotonic() - began

    def release(self, timeout_s: float = 10.0) -> None:
        """Ask the current worker to drop what it keeps between requests of one stage (its
        timing draws, outputs lent over CUDA IPC) and give its cached memory back. A worker
        that does not answer is replaced."""
        if self.child_pid is None:
            return
        self._resume()
        try:
            wire.write_message(self.to_child, wire.encode_request(wire.Release()))
            if self._wait_readable(timeout_s):
                reply, _ = wire.read_message(self.from_child)
                # What it refused while no request ran (a thread of the candidate's).
                if isinstance(reply, dict) and reply.get("attempts"):
                    self.unreported = (self.child_key, reply["attempts"])
                if isinstance(reply, dict) and reply.get("started"):
                    self._started_since_release = (self.child_key, list(reply["started"]))
                return
        except (EOFError, OSError, ValueError):  # gone, or its answer is not a message
            pass
        self.stop_child()

    def close(self) -> None:
        self.stop_child()
        if self.zygote is not None:
            assert self.control is not None
            self.control.close()
            self.zygote.kill()
            self.zygote.wait()
            self.zygote = None
        self.log.close()
        Path(self.log.name).unlink(missing_ok=True)

    # --- children --------------------------------------------------------------------------

    def stop_child(self) -> int | None:
        """Kill the current child (and whatever it started); its exit status, when known."""
        if self.child_pid is None:
            return None
        try:
            os.killpg(self.child_pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        status = self._control(f"wait {self.child_pid}", "status")
        for fd in (self.to_child, self.from_child):
            try:
                os.close(fd)
            except OSError:
                pass
        self.to_child = self.from_child = -1
        self.child_pid = self.child_key = None
        self._paused = False
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)
            self.scratch = None
        return status

    def _policy(self, loading: wire.Loading) -> str | None:
        """The new worker's confinement, as the JSON its first request carries."""
        if self.confine_mode == "off":
            return None
        self.scratch = Path(tempfile.mkdtemp(prefix="kb-scratch-"))
        return self.policy_of(loading, self.scratch).to_json()

    def profiled(self, request: wire.Ncu, scratch: Path) -> wire.Ncu:
        """The request for a process of its own that runs the candidate under a profiler: its
        files confined as a worker's are, writing only to `scratch`, but free to talk to the
        profiler that started it (TCP and sockets outside its domain, signals)."""
        if self.confine_mode == "off":
            return dataclasses.replace(request, policy=None)
        policy = dataclasses.replace(self.policy_of(request.loading, scratch), network=True,
                                     scoped=False)
        return dataclasses.replace(request, policy=policy.to_json())

    def policy_of(self, loading: wire.Loading, scratch: Path) -> confine.Policy:
        """The confinement of a worker that serves this candidate and writes only to scratch."""
        build, headers = loading.env.get("TORCH_EXTENSIONS_DIR"), loading.env.get(pch.ROOT_ENV)
        return confine.policy_for(Path(loading.candidate), Path(loading.problem), scratch,
                                  Path(build) if build else None, self.protected,
                                  reads=(Path(headers),) if headers else ())

    def _start_child(self, loading: wire.Loading) -> Fault | None:
        if self.zygote is None or self.zygote.poll() is not None:
            self._start_zygote()
        began = time.perf_counter()
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        assert self.control is not None
        socket.send_fds(self.control, [b"fork"], [to_child_r, from_child_w])
        os.close(to_child_r)
        os.close(from_child_w)
        self.to_child, self.from_child = to_child_w, from_child_r
        self.child_pid = self._control(None, "pid")
        if self.worker_cores is not None and self.child_pid is not None:
            cores.pin_process_thread(self.child_pid, self.worker_cores)
        log_start = self._log_size()
        try:
            wire.write_message(self.to_child,
                               wire.encode_request(wire.Ping(self._policy(loading))))
            if not self._wait_readable(STARTUP_TIMEOUT_S, stoppable=True):
                self.stop_child()
                return Fault(faults.CRASHED, f"the worker did not start within "
                             f"{STARTUP_TIMEOUT_S:g} s", self._log_since(log_start))
            hello, _ = wire.read_message(self.from_child)
        except (EOFError, OSError):
            return self._lost(log_start)
        self.confinement = hello.get("confinement", "none")
        if self.confine_mode == "require" and not hello.get("confined"):
            self.stop_child()  # an error of the machine, never a verdict on the candidate
            raise confine.ConfineError(f"--kb-confine=require: the worker could not be "
                                       f"confined: {self.confinement}")
        confined, stopped = time.perf_counter(), self.stopped_s
        try:
            self.cuda_ipc = self.device.startswith("cuda") and self._probe_cuda()
        except (EOFError, OSError):
            return self._lost(log_start)
        self.start_parts = {"start_confine": round(confined - began - stopped, 6),
                            "start_cuda": round(time.perf_counter() - confined
                                                - (self.stopped_s - stopped), 6)}
        return None

    def _start_zygote(self) -> None:
        parent_end, zygote_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.zygote = subprocess.Popen(
            [sys.executable, "-m", "pytest_kernelbench.isolation.worker", str(zygote_end.fileno())],
            pass_fds=(zygote_end.fileno(),), stdin=subprocess.DEVNULL, stdout=self.log,
            stderr=subprocess.STDOUT, env=self.env)
        if self.shared_cores is not None:  # before it forks a worker: they inherit its cores
            cores.pin_process_thread(self.zygote.pid, self.shared_cores)
        zygote_end.close()
        self.control = parent_end
        self.control.settimeout(STARTUP_TIMEOUT_S)

    def _control(self, command: str | None, answer: str) -> int | None:
        """Send a command to the zygote (None: just read) and return the number it answers."""
        assert self.control is not None
        try:
            if command is not None:
                self.control.sendall(command.encode())
            line = b""
            while not line.endswith(b"\n"):
                chunk = self.control.recv(64)
                if not chunk:
                    raise OSError("zygote closed its control socket")
                line += chunk
        except OSError:
            return None
        word, _, number = line.decode().strip().partition(" ")
        return int(number) if word == answer else None

    def _probe_cuda(self) -> bool:
        """Check that the new worker's GPU is this process's, and whether CUDA IPC works.

        A worker on another GPU would time and judge work this process never sees: that is
        an error of the harness (raised), never a verdict on the candidate.
        """
        import torch

        wire.write_message(self.to_child,
                           wire.encode_request(wire.IpcProbe(self.worker_device)))
        if not self._wait_readable(STARTUP_TIMEOUT_S, stoppable=True):
            return False
        reply, payload = wire.read_message(self.from_child)
        if not reply.get("ok"):
            raise RuntimeError(f"the sandbox worker could not use {self.device} "
                               f"(confinement: {self.confinement}): {reply.get('error')}")
        self.worker_gpu = reply.get("gpu_uuid")
        ours = str(torch.cuda.get_device_properties(self.device).uuid)
        if self.worker_gpu != ours:
            raise RuntimeError(f"the sandbox worker runs on GPU {self.worker_gpu}, not on "
                               f"{self.device} ({ours}); CUDA_VISIBLE_DEVICES="
                               f"{self.env.get('CUDA_VISIBLE_DEVICES')!r}")
        try:
            cuda = devices.cuda_index(self.device)
            value = wire.decode_value(reply["output"], payload, [0], cuda)
            expected = torch.arange(64, dtype=torch.float32, device=self.device)
            return bool(torch.equal(value, expected))
        except Exception:  # noqa: BLE001 - any failure means: send bytes instead
            return False

    def _wait_readable(self, timeout_s: float, stoppable: bool = False) -> bool:
        """Whether the worker answered within timeout_s, not counting the time it was stopped
        for timings (stoppable requests, --kb-drain=stop)."""
        deadline = time.monotonic() + timeout_s
        stops = stoppable and self.stops_for_timings and self.hold is not None
        looked_for_compilers = 0.0
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                watching = self.hold is not None and self.steps_aside
                aside = watching and not self.hold.held  # type: ignore[union-attr]
                poll_s = devices.QUIET_POLL_S if aside or stops else \
                    BUILD_POLL_S if watching else 1.0
                ready, _, _ = select.select([self.from_child], [], [], min(left, poll_s))
                if ready:
                    return True
                # the process tree is walked every BUILD_POLL_S, however often the gate is read
                if watching and (aside or time.monotonic() - looked_for_compilers >= BUILD_POLL_S):
                    looked_for_compilers = time.monotonic()
                    self._make_way()
                if stops:
                    deadline += self._stop_for_timings()
        finally:
            self._rejoin()

    def _stop_for_timings(self) -> float:
        """With the gate closed, stop the worker where it is and let the device go until the
        timings ran (the timing waits for the work it queued: devices.wait_for_idle); seconds
        it was stopped."""
        if self.hold is None or not self.hold.timing_waits():
            return 0.0
        began = time.monotonic()
        stopped = self._signal_child(signal.SIGSTOP)
        loading.synchronize(self.device)  # what this process queued is done before it goes
        self.hold.step_aside()
        try:
            self.hold.step_back()
        finally:
            if stopped:
                self._signal_child(signal.SIGCONT)
        spent = time.monotonic() - began
        self.stopped_s += spent
        return spent

    def _make_way(self) -> None:
        """While the worker waits on a compiler it does no GPU work: the device lock it runs
        under steps aside for that long, so a build of a minute holds up no timing."""
        assert self.hold is not None
        if not self.hold.held:  # its compilers pause while a timing runs on this host
            timing = devices.timing_in_progress()
            if timing != self._quieted:
                sent = self._signal_child(signal.SIGSTOP if timing else signal.SIGCONT)
                self._quieted = timing and sent
            if self._quieted:
                return
        building = self.child_pid is not None and compiling(self.child_pid)
        if building and self.hold.held:
            self._compilers = devices.announce_compilers()  # before a timing can come in
            self.hold.step_aside()
        elif not building and not self.hold.held:
            self._rejoin()

    def _rejoin(self) -> None:
        """Take the device lock back, the worker stopped until it is held again."""
        if self.hold is None or self.hold.held:
            return
        stopped = self._signal_child(signal.SIGSTOP)
        try:
            self.hold.step_back()
        finally:
            self._quieted = False
            if self._compilers is not None:
                self._compilers.close()
                self._compilers = None
            if stopped:
                self._signal_child(signal.SIGCONT)

    def _signal_child(self, signum: int) -> bool:
        try:
            os.killpg(self.child_pid, signum)  # type: ignore[arg-type]
            return True
        except (ProcessLookupError, PermissionError, TypeError):
            return False

    def _lost(self, log_start: int) -> Fault:
        returncode = self.stop_child()
        log = self._log_since(log_start)
        status = faults.EXITED if returncode is not None and returncode >= 0 else faults.CRASHED
        how = faults.describe_exit(returncode) if returncode is not None else "stopped answering"
        last = log.strip().splitlines()[-1] if log.strip() else ""
        message = f"worker process ended ({how})" + (f": {faults.one_line(last)}" if last else "")
        return Fault(status, message, log)

    def _log_size(self) -> int:
        self.log.flush()
        return os.path.getsize(self.log.name)

    def _log_since(self, start: int) -> str:
        """The tail of what the worker printed since start, with any failed build's summary
        line (builds.failure_line) from before the tail put in front of it: a record must
        still learn that a compiler failed when the candidate printed a lot after it."""
        with open(self.log.name, "rb") as handle:
            handle.seek(start)
            data = handle.read()
        tail = data[-LOG_TAIL_BYTES:].decode(errors="replace")
        earlier = builds.failure_lines(data[:-LOG_TAIL_BYTES].decode(errors="replace")) \
            if len(data) > LOG_TAIL_BYTES else []
        return "\n".join([*earlier[-1:], tail])
