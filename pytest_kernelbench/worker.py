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
        import torch

        device = request["device"]
        inputs = loading.make_inputs(loaded.problem, request["input_seed"], device)

        def forward():
            with torch.no_grad():
                out = loaded.model(*inputs)
            loading.synchronize(device)
            return out

        output = guarded(forward, "forward", request["candidate"])
        blobs: list[bytes] = []
        keep_alive = self.shared if request.get("cuda_ipc") else None
        tree = wire.encode_value(output, blobs, keep_alive)
        return {"ok": True, "output": tree}, blobs

    def time(self, loaded: Loaded, request: dict) -> tuple[dict, list[bytes]]:
        import torch

        device = request["device"]
        if loaded.reference is None:
            loaded.reference = loading.build_model(loaded.problem.Model, loaded.init_args,
                                                   request["seed"], device, request["mode"])
        inputs = loading.make_inputs(loaded.problem, request["input_seed"], device)
        reference, candidate = loaded.reference, loaded.model

        def run_baseline():
            with torch.no_grad():
                reference(*inputs)

        def run_candidate():
            with torch.no_grad():
                candidate(*inputs)

        samples = guarded(
            lambda: timing.measure_interleaved(
                {"baseline": run_baseline, "candidate": run_candidate}, device,
                request["budget_s"], request["min_rounds"]),
            "forward", request["candidate"])
        return {"ok": True, "samples_s": samples}, []


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


def main(argv: list[str]) -> int:
    read_fd, write_fd = int(argv[1]), int(argv[2])
    import torch  # noqa: F401 - paid once here, before the first candidate's clock starts

    loading.use_exact_fp32()

    worker = Worker()
    while True:
        try:
            request, _ = wire.read_message(read_fd)
        except EOFError:
            return 0
        reply, blobs = worker.handle(request)
        wire.write_message(write_fd, reply, blobs)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
