"""The sandbox worker's requests, answered in this process (the sandbox's fork and pipes are
tested in test_sandbox.py)."""

from __future__ import annotations

import os
import sys
import threading
import types
from pathlib import Path

import pytest
import torch

from pytest_kernelbench import faults
from pytest_kernelbench.isolation import wire
from pytest_kernelbench.isolation.worker import Worker, serve
from pytest_kernelbench.precision import EXACT_FP32
from pytest_kernelbench.suite import loading

EXAMPLES = Path(__file__).parent / "examples"
RELU = EXAMPLES / "problems" / "level1" / "2_ReLU.py"
CANDIDATES = EXAMPLES / "candidates"
GOOD = CANDIDATES / "good" / "level1" / "2_ReLU.py"


def loading_of(candidate: Path, problem: Path = RELU) -> wire.Loading:
    return wire.Loading(problem=str(problem), candidate=str(candidate), seed=42, device="cpu",
                        mode="train", precision="fp32", tf32="off")


def ask(worker: Worker, request: wire.Request) -> tuple[dict, object]:
    header, blobs = worker.handle(request)
    payload = memoryview(b"".join(blobs))
    value = wire.decode_value(header["output"], payload, [0]) if "output" in header else None
    return header, value


def test_a_run_returns_the_candidates_output_for_the_draw_asked_for():
    worker = Worker()
    header, output = ask(worker, wire.Run(loading_of(GOOD), input_seed=7))
    assert header["ok"]
    problem = loading.import_file(RELU, "kb_problem")
    (x,) = loading.make_inputs(problem, 7, "cpu", EXACT_FP32)
    assert torch.equal(output, torch.relu(x))


def test_timing_returns_samples_of_both_sides_and_the_last_output_of_each_draw():
    worker = Worker()
    header, _ = ask(worker, wire.Time(loading_of(GOOD), input_seeds=(9042, 9043), budget_s=0.01,
                                      min_rounds=3))
    assert header["ok"] and set(header["samples_s"]) == {"baseline", "candidate"}
    assert len(header["samples_s"]["candidate"]) >= 3
    assert [item["seed"] for item in header["timed_outputs"]] == [9042, 9043]
    assert header["reused_output"] is False


@pytest.mark.parametrize("min_rounds", [1, 3])
def test_a_candidate_that_returns_one_buffer_gets_each_draw_checked_as_returned(min_rounds):
    seeds = [9042, 9043, 9044]
    request = wire.Time(loading_of(CANDIDATES / "reused_buffer" / "level1" / "2_ReLU.py"),
                        input_seeds=tuple(seeds), budget_s=0.0, min_rounds=min_rounds)
    header, blobs = Worker().handle(request)
    assert header["ok"] and header["reused_output"] is True
    payload, offset = memoryview(b"".join(blobs)), [0]
    problem = loading.import_file(RELU, "kb_problem")
    for item in header["timed_outputs"]:
        got = wire.decode_value(item["output"], payload, offset)
        (x,) = loading.make_inputs(problem, item["seed"], "cpu", EXACT_FP32)
        assert torch.equal(got, torch.relu(x)), item["seed"]
    assert sorted(item["seed"] for item in header["timed_outputs"]) == seeds


def test_faults_come_back_as_statuses_not_exceptions():
    broken = CANDIDATES / "broken" / "level1" / "2_ReLU"
    header, _ = ask(Worker(), wire.Load(loading_of(broken / "no_model_new.py")))
    assert (header["ok"], header["status"]) == (False, faults.NO_MODEL_NEW)
    header, _ = ask(Worker(), wire.Run(loading_of(broken / "forward_error.py"), input_seed=1))
    assert (header["ok"], header["status"]) == (False, faults.RUNTIME_ERROR)
    assert "forward_error.py" in header["details"]


def test_a_burst_runs_the_calls_and_says_nothing_else():
    header, _ = ask(Worker(), wire.Burst(loading_of(GOOD), input_seeds=(1, 2), calls=5))
    assert header["ok"] and set(header) == {"ok", "timed_s"} and header["timed_s"] > 0


def test_the_baseline_runs_under_the_harnesss_switches_whatever_the_candidate_set():
    problem = EXAMPLES / "flag_problems" / "level1" / "1_Flags.py"
    candidate = CANDIDATES / "flags" / "level1" / "1_Flags.py"
    worker = Worker()
    try:
        loading.apply(EXACT_FP32)
        on = loading_of(candidate, problem)
        for request in [wire.Time(on, input_seeds=(1, 2), budget_s=0.0, min_rounds=2),
                        wire.Burst(on, input_seeds=(1, 2), calls=3, side="baseline")]:
            header, _ = worker.handle(request)
            assert header["ok"], header
        baseline_seen = worker.loaded.problem.SEEN
        candidate_seen = type(worker.loaded.model).forward.__globals__["SEEN"]
        assert baseline_seen and set(baseline_seen) == {"highest"}
        assert candidate_seen and set(candidate_seen) == {"medium"}
        assert torch.get_float32_matmul_precision() == "medium"  # the candidate's, restored
    finally:
        loading.apply(EXACT_FP32)
        torch.set_float32_matmul_precision("highest")
        torch.backends.cudnn.deterministic = False


def test_a_release_drops_the_timing_draws_and_keeps_the_candidate():
    worker = Worker()
    ask(worker, wire.Time(loading_of(GOOD), input_seeds=(9042, 9043), budget_s=0.01,
                          min_rounds=1))
    assert worker.loaded is not None and len(worker.loaded.timing_sets[1]) == 2
    model = worker.loaded.model
    header, _ = ask(worker, wire.Release())
    assert header["ok"] and worker.loaded.timing_sets == ((), [])
    assert worker.loaded.model is model  # the next stage of the case does not load it again


def test_a_load_says_where_its_time_went():
    header, _ = ask(Worker(), wire.Load(loading_of(GOOD)))
    assert header["ok"] and list(header["phases"]) == ["problem", "libraries", "import",
                                                       "construct"]
    assert all(seconds >= 0 for seconds in header["phases"].values())


class CachingAllocator:
    """torch.cuda as release_cached_memory sees it: bytes reserved, bytes in use, empties."""

    def __init__(self, reserved: int, allocated: int):
        self.reserved, self.allocated, self.emptied = reserved, allocated, 0

    def is_initialized(self) -> bool:
        return True

    def memory_reserved(self) -> int:
        return self.reserved

    def memory_allocated(self) -> int:
        return self.allocated

    def empty_cache(self) -> None:
        self.emptied += 1
        self.reserved = self.allocated


@pytest.mark.parametrize("reserved, keep, emptied", [
    (5 << 20, 0, 1),  # a stage's end: everything unused goes back
    (5 << 20, 8 << 20, 0),  # between requests: a small cache stays
    (12 << 20, 8 << 20, 1),  # a large one goes back all the same
])
def test_cached_gpu_memory_goes_back_unless_a_small_cache_may_stay(monkeypatch, reserved, keep,
                                                                  emptied):
    allocator = CachingAllocator(reserved=reserved, allocated=1 << 20)
    monkeypatch.setitem(sys.modules, "torch", types.SimpleNamespace(cuda=allocator))
    loading.release_cached_memory(keep)
    assert allocator.emptied == emptied


def test_the_worker_refuses_a_request_it_cannot_decode_and_answers_the_next():
    to_worker, for_worker = os.pipe()
    from_worker, worker_says = os.pipe()
    server = threading.Thread(target=serve, args=(to_worker, worker_says))
    server.start()
    try:
        header = wire.encode_request(wire.Run(loading_of(GOOD), input_seed=7))
        del header["input_seed"]
        wire.write_message(for_worker, header)
        reply, _ = wire.read_message(from_worker)
        assert reply == {"ok": False, "refused": "a run request lacks required fields: input_seed"}
        wire.write_message(for_worker, {"op": "rerun"})
        reply, _ = wire.read_message(from_worker)
        assert not reply["ok"] and reply["refused"].startswith("unknown request op 'rerun'")
        wire.write_message(for_worker, wire.encode_request(wire.Release()))
        assert wire.read_message(from_worker)[0] == {"ok": True}
    finally:
        os.close(for_worker)
        server.join(timeout=60)
        for fd in (to_worker, from_worker, worker_says):
            os.close(fd)
    assert not server.is_alive()  # it ended with its channel, not at a refusal
