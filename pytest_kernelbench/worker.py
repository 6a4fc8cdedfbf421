"""The sandbox worker: a separate process that imports and runs untrusted candidate code.

Started by sandbox.Sandbox as `python -m pytest_kernelbench.worker READ_FD WRITE_FD`. It answers
one request at a time: load a candidate, run it on one draw of inputs, or time it beside the
eager reference. Every reply is a wire message (JSON and raw tensor bytes), never a pickle.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from pytest_kernelbench import faults, loading, timing, wire


@dataclass
class Loaded:
    key: tuple
    problem: ModuleType
    init_args: list[Any]
    model: Any
    reference: Any = None


class CandidateFault(Exception):
    """A failure of candidate code, already classified."""

    def __init__(self, status: str, message: str, details: str = ""):
        super().__init__(message)
        self.status, self.message, self.details = status, message, details


class Worker:
    def __init__(self) -> None:
        self.loaded: Loaded | None = None
        self.shared: list = []  # tensors the parent may still be copying out over CUDA IPC

    def handle(self, request: dict) -> tuple[dict, list[bytes]]:
        op = request["op"]
        self.shared = []
        try:
            if op == "ping":
                return {"ok": True, "pid": os.getpid()}, []
            if op == "ipc_probe":
                import torch

                probe = torch.arange(64, dtype=torch.float32, device=request["device"])
                return {"ok": True, "output": wire.encode_value(probe, [], self.shared)}, []
            loaded = self.load(request)
            if op == "load":
                return {"ok": True}, []
            if op == "run":
                return self.run(loaded, request)
            if op == "time":
                return self.time(loaded, request)
            if op == "burst":
                return self.burst(loaded, request)
            if op == "profile":
                return self.profile(loaded, request)
            raise ValueError(f"unknown request {op!r}")
        except CandidateFault as fault:
            return self.failure(fault.status, fault.message, fault.details), []
        except Exception as exc:  # noqa: BLE001 - e.g. inputs made with torch patched by a candidate
            status = faults.classify_exception(exc, "forward")
            return self.failure(status, faults.describe_exception(exc), ""), []

    def failure(self, status: str, message: str, details: str) -> dict:
        if status == faults.CUDA_ERROR:
            self.loaded = None  # the CUDA context is lost; the parent replaces this process
        return {"ok": False, "status": status, "error": message, "details": details}

    def load(self, request: dict) -> Loaded:
        key = (request["problem"], request["candidate"], request["seed"], request["device"],
               request["mode"])
        if self.loaded is not None and self.loaded.key == key:
            return self.loaded
        self.loaded = None
        device, seed = request["device"], request["seed"]
        problem = loading.import_file(Path(request["problem"]), "kb_problem")
        init_args = loading.make_init_args(problem, seed, device)
        candidate_path = request["candidate"]
        module = guarded(lambda: loading.import_file(Path(candidate_path), "kb_candidate"),
                         "import", candidate_path)
        cls = getattr(module, "ModelNew", None)
        if not isinstance(cls, type):
            raise CandidateFault(faults.NO_MODEL_NEW,
                                 "the candidate module defines no class ModelNew")
        model = guarded(lambda: loading.build_model(cls, init_args, seed, device,
                                                    request["mode"]),
                        "init", candidate_path)
        self.loaded = Loaded(key, problem, init_args, model)
        return self.loaded

    def run(self, loaded: Loaded, request: dict) -> tuple[dict, list[bytes]]:
        """One correctness trial: the output, and the inputs as the candidate left them."""
        device = request["device"]
        inputs = loading.make_inputs(loaded.problem, request["input_seed"], device)
        output = guarded(lambda: forward(loaded.model, inputs, device), "forward",
                         request["candidate"])
        blobs: list[bytes] = []
        keep_alive = self.shared if request.get("cuda_ipc") else None
        return {"ok": True, "output": wire.encode_value(output, blobs, keep_alive),
                "inputs_after": wire.encode_value(tensors_only(inputs), blobs, keep_alive)}, blobs

    def time(self, loaded: Loaded, request: dict) -> tuple[dict, list[bytes]]:
        """Baseline and candidate in turns, on input buffers refilled before every call.

        The candidate sees the same buffers (same pointers) with rotating contents, so a cache
        keyed on pointers or call counts returns stale results; the last output it produced
        for each input set goes back to the pytest process to be checked. Every baseline output
        is poisoned with NaN before it is freed, so `torch.empty` cannot hand the candidate the
        reference's answer.
        """
        device = request["device"]
        reference = self.reference_model(loaded, request)
        seeds = request["input_seeds"]
        sets = [loading.make_inputs(loaded.problem, seed, device) for seed in seeds]
        base_buffers = loading.clone_inputs(sets[0])
        cand_buffers = loading.clone_inputs(sets[0])
        turn = {"candidate": 0}
        last_outputs: dict[int, Any] = {}

        def refill_candidate() -> None:
            turn["candidate"] = (turn["candidate"] + 1) % len(sets)
            refill(cand_buffers, sets[turn["candidate"]])

        def keep_candidate_output(output) -> None:
            last_outputs[turn["candidate"]] = output

        turns = {
            "baseline": timing.Turn(run=lambda: forward_async(reference, base_buffers),
                                    finish=poison),
            "candidate": timing.Turn(run=lambda: forward_async(loaded.model, cand_buffers),
                                     prepare=refill_candidate, finish=keep_candidate_output),
        }
        samples = guarded(
            lambda: timing.measure_interleaved(turns, device, request["budget_s"],
                                               request["min_rounds"]),
            "forward", request["candidate"])
        blobs: list[bytes] = []
        keep_alive = self.shared if request.get("cuda_ipc") else None
        checked = [{"seed": seeds[index], "output": wire.encode_value(out, blobs, keep_alive)}
                   for index, out in sorted(last_outputs.items())]
        return {"ok": True, "samples_s": samples, "timed_outputs": checked}, blobs

    def burst(self, loaded: Loaded, request: dict) -> tuple[dict, list[bytes]]:
        """Back-to-back candidate calls for the pytest process to time with its own clock."""
        device = request["device"]
        sets = [loading.make_inputs(loaded.problem, seed, device)
                for seed in request["input_seeds"]]
        guarded(lambda: timing.run_burst(loaded.model, sets, request["calls"], device),
                "forward", request["candidate"])
        return {"ok": True}, []

    def profile(self, loaded: Loaded, request: dict) -> tuple[dict, list[bytes]]:
        """Names of the GPU kernels one call launches, for the candidate and the baseline."""
        device = request["device"]
        inputs = loading.make_inputs(loaded.problem, request["input_seed"], device)
        reference = self.reference_model(loaded, request)
        kernels = {
            "candidate": guarded(lambda: launched_kernels(loaded.model, inputs, device),
                                 "forward", request["candidate"]),
            "baseline": launched_kernels(reference, inputs, device),
        }
        return {"ok": True, "kernels": kernels}, []

    def reference_model(self, loaded: Loaded, request: dict):
        if loaded.reference is None:
            loaded.reference = loading.build_model(loaded.problem.Model, loaded.init_args,
                                                   request["seed"], request["device"],
                                                   request["mode"])
        return loaded.reference


def forward(model, inputs: list, device: str):
    out = forward_async(model, inputs)
    loading.synchronize(device)
    return out


def forward_async(model, inputs: list):
    import torch

    with torch.no_grad():
        return model(*inputs)


def tensors_only(values: list) -> list:
    import torch

    return [v for v in values if isinstance(v, torch.Tensor)]


def refill(buffers: list, source: list) -> None:
    import torch

    for buffer, value in zip(buffers, source):
        if isinstance(buffer, torch.Tensor):
            buffer.copy_(value)


def poison(output) -> None:
    import torch

    if isinstance(output, torch.Tensor):
        output.fill_(float("nan") if output.is_floating_point() else -1)
    elif isinstance(output, (list, tuple)):
        for item in output:
            poison(item)


def launched_kernels(model, inputs: list, device: str) -> list[str]:
    import torch
    from torch.profiler import ProfilerActivity, profile

    forward(model, inputs, device)  # warm: lazy builds and autotuning stay out of the profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        forward(model, inputs, device)
    names = {event.name for event in prof.events()
             if event.device_type == torch.autograd.DeviceType.CUDA}
    return sorted(names)


def guarded(fn, stage: str, candidate_path: str):
    """Run candidate code; turn anything it raises (exit included) into a CandidateFault."""
    try:
        return fn()
    except CandidateFault:
        raise
    except BaseException as exc:  # noqa: BLE001 - candidate code may raise anything, even SystemExit
        status = faults.classify_exception(exc, stage)
        raise CandidateFault(status, faults.exception_message(exc, status),
                             faults.candidate_traceback(exc, candidate_path)) from None


def serve(read_fd: int, write_fd: int) -> int:
    """Answer requests on the two pipes until the pytest process closes them."""
    worker = Worker()
    while True:
        try:
            request, _ = wire.read_message(read_fd)
        except EOFError:
            return 0
        reply, blobs = worker.handle(request)
        wire.write_message(write_fd, reply, blobs)


def zygote(control_fd: int) -> int:
    """Fork one fresh worker per candidate, from a process that has already imported torch.

    Each candidate gets a pristine interpreter (nothing an earlier candidate patched, built or
    broke survives), while `import torch` is paid once. Requests on the control socket:
    `fork` with the child's two pipe ends attached (SCM_RIGHTS) -> `pid N`;
    `wait N` -> `status CODE` once that child has ended.
    """
    import socket

    import torch  # noqa: F401 - imported before any fork, never initialising CUDA here

    loading.use_exact_fp32()
    control = socket.socket(fileno=control_fd)
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(control, 256, 2)
        except OSError:
            return 0
        if not message:
            return 0
        command = message.decode().split()
        if command[0] == "fork":
            pid = os.fork()
            if pid == 0:
                control.close()
                os.setsid()  # a timeout kills the candidate and anything it started
                code = 1
                try:
                    code = serve(fds[0], fds[1])
                finally:
                    os._exit(code)
            for fd in fds:
                os.close(fd)
            control.sendall(f"pid {pid}\n".encode())
        elif command[0] == "wait":
            _, status = os.waitpid(int(command[1]), 0)
            control.sendall(f"status {os.waitstatus_to_exitcode(status)}\n".encode())


def main(argv: list[str]) -> int:
    return zygote(int(argv[1]))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
