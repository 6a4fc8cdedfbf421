"""The pytest side of the sandbox: one worker process, reused while it stays healthy.

A request that the worker does not answer in time, or that kills it, becomes a Fault for that
request alone; the next request starts a fresh worker.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_kernelbench import faults, wire

LOG_TAIL_BYTES = 2000
# Starting a worker (interpreter plus `import torch`) is not charged to any candidate's stage.
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
    value: Any = None
    wall_s: float = 0.0


class Sandbox:
    def __init__(self, env: dict[str, str] | None = None, device: str = "cpu"):
        self.env = {**os.environ, **(env or {})}
        self.device = device
        self.cuda_ipc = False  # probed at each start: outputs then skip the trip through host memory
        self.process: subprocess.Popen | None = None
        self.log = tempfile.NamedTemporaryFile(prefix="kb-worker-", suffix=".log", delete=False)
        self.to_worker = self.from_worker = -1

    def request(self, header: dict, timeout_s: float) -> Reply | Fault:
        """Send one request and wait for its reply, at most timeout_s seconds."""
        if self.process is None:
            started = self._start()
            if isinstance(started, Fault):
                return started
        log_start = self._log_size()
        started = time.perf_counter()
        header = {**header, "cuda_ipc": self.cuda_ipc}
        try:
            wire.write_message(self.to_worker, header)
            if not self._wait_readable(timeout_s):
                self.stop()
                return Fault(faults.TIMEOUT, f"no answer within {timeout_s:g} s "
                             f"(--kb-timeout); the worker was killed",
                             self._log_since(log_start))
            reply, payload = wire.read_message(self.from_worker)
        except (EOFError, BrokenPipeError, OSError):
            return self._lost(log_start)
        wall_s = time.perf_counter() - started
        if not reply.get("ok"):
            if reply.get("status") == faults.CUDA_ERROR:
                self.stop()  # a CUDA error poisons the context for every later request
            details = reply.get("details") or ""
            log = self._log_since(log_start)
            return Fault(reply.get("status", faults.RUNTIME_ERROR), reply.get("error", ""),
                         details + (f"\n--- worker output ---\n{log}" if log else ""))
        value = None
        if "output" in reply:
            try:
                value = wire.decode_value(reply["output"], payload, [0])
            except (ValueError, RuntimeError, KeyError) as exc:
                return Fault(faults.STRUCTURE_MISMATCH, f"unreadable output: {exc}")
        return Reply(reply, value, wall_s)

    def stop(self) -> None:
        if self.process is None:
            return
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait()
        self._close_pipes()
        self.process = None

    def close(self) -> None:
        self.stop()
        self.log.close()
        Path(self.log.name).unlink(missing_ok=True)

    def _start(self) -> Fault | None:
        to_worker_r, to_worker_w = os.pipe()
        from_worker_r, from_worker_w = os.pipe()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "pytest_kernelbench.worker", str(to_worker_r),
             str(from_worker_w)],
            pass_fds=(to_worker_r, from_worker_w),
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT,
            env=self.env,
            start_new_session=True,  # so a timeout kills whatever the candidate spawned too
        )
        os.close(to_worker_r)
        os.close(from_worker_w)
        self.to_worker, self.from_worker = to_worker_w, from_worker_r
        log_start = self._log_size()
        try:
            wire.write_message(self.to_worker, {"op": "ping"})
            if not self._wait_readable(STARTUP_TIMEOUT_S):
                self.stop()
                return Fault(faults.CRASHED, f"the worker did not start within "
                             f"{STARTUP_TIMEOUT_S:g} s", self._log_since(log_start))
            wire.read_message(self.from_worker)
        except (EOFError, OSError):
            return self._lost(log_start)
        if self.device.startswith("cuda"):
            self.cuda_ipc = self._probe_cuda_ipc()
        return None

    def _probe_cuda_ipc(self) -> bool:
        import torch

        try:
            wire.write_message(self.to_worker, {"op": "ipc_probe", "device": self.device})
            if not self._wait_readable(STARTUP_TIMEOUT_S):
                return False
            reply, payload = wire.read_message(self.from_worker)
            value = wire.decode_value(reply["output"], payload, [0])
            expected = torch.arange(64, dtype=torch.float32, device=value.device)
            return bool(torch.equal(value, expected))
        except Exception:  # noqa: BLE001 - any failure means: send bytes instead
            return False

    def _wait_readable(self, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            ready, _, _ = select.select([self.from_worker], [], [], min(left, 1.0))
            if ready:
                return True

    def _lost(self, log_start: int) -> Fault:
        assert self.process is not None
        try:
            returncode = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            returncode = None
        self.stop()
        log = self._log_since(log_start)
        if returncode == 0 or (returncode is not None and returncode > 0):
            status = faults.EXITED
        else:
            status = faults.CRASHED
        how = faults.describe_exit(returncode) if returncode is not None else "stopped answering"
        last = log.strip().splitlines()[-1] if log.strip() else ""
        message = f"worker process ended ({how})" + (f": {faults.one_line(last)}" if last else "")
        return Fault(status, message, log)

    def _log_size(self) -> int:
        self.log.flush()
        return os.path.getsize(self.log.name)

    def _log_since(self, start: int) -> str:
        with open(self.log.name, "rb") as handle:
            handle.seek(start)
            data = handle.read()
        return data[-LOG_TAIL_BYTES:].decode(errors="replace")

    def _close_pipes(self) -> None:
        for fd in (self.to_worker, self.from_worker):
            try:
                os.close(fd)
            except OSError:
                pass
        self.to_worker = self.from_worker = -1
