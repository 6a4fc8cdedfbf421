"""The sandbox's message format: what a worker sends must decode to the same values, and
nothing it sends can run code here."""

from __future__ import annotations

import json
import os
import threading

import pytest
import torch

from pytest_kernelbench.isolation import wire


def round_trip(value):
    blobs: list[bytes] = []
    tree = wire.encode_value(value, blobs)
    return wire.decode_value(tree, memoryview(b"".join(blobs)), [0])


@pytest.mark.parametrize("tensor", [
    torch.randn(3, 4),
    torch.arange(12, dtype=torch.int64).reshape(3, 4).t(),  # not contiguous
    torch.tensor([True, False, True]),
    torch.randn(5).to(torch.bfloat16),
    torch.randn(2, 3).to(torch.float16),
    torch.empty(0, 7),
    torch.tensor(3.5),  # zero-dimensional
])
def test_tensors_come_back_with_their_values_dtype_and_shape(tensor):
    back = round_trip(tensor)
    assert back.dtype == tensor.dtype and back.shape == tensor.shape
    assert torch.equal(back, tensor)


def test_nested_outputs_keep_their_structure():
    value = (torch.ones(2), [torch.zeros(1, dtype=torch.int32), 3, 2.5, None, "x"], True)
    back = round_trip(value)
    assert isinstance(back, tuple) and isinstance(back[1], list)
    assert torch.equal(back[0], value[0]) and torch.equal(back[1][0], value[1][0])
    assert back[1][1:] == [3, 2.5, None, "x"] and back[2] is True


def test_a_tensor_subclass_and_an_odd_object_are_named_not_decoded():
    class Lazy(torch.Tensor):
        pass

    lazy = torch.ones(3).as_subclass(Lazy)
    back = round_trip([lazy, object()])
    assert wire.subclass_names(back) == ["Lazy"]
    assert isinstance(back[1], wire.Unsupported) and repr(back[1]) == "<object>"


def test_a_subclass_is_sent_by_its_type_without_calling_its_methods():
    # CUDA-L1's lazy matmul (level 1, problem 9) overrides clone and to: encoding must not call
    # them (they raised and turned a faked output into a runtime_error).
    class Deferred(torch.Tensor):
        def clone(self, *args, **kwargs):
            raise TypeError("clone() got an unexpected keyword argument 'memory_format'")

        def to(self, *args, **kwargs):
            raise TypeError("no")

    class Tensor(torch.Tensor):  # named like a plain tensor: still only its type is sent
        pass

    deferred = torch.ones(3).as_subclass(Deferred)
    blobs0: list[bytes] = []
    named = wire.encode_value(torch.ones(3).as_subclass(Tensor), blobs0)
    assert isinstance(wire.decode_value(named, memoryview(b""), [0]), wire.Subclass)
    for keep_alive in (None, []):
        blobs: list[bytes] = []
        tree = wire.encode_value(deferred, blobs, keep_alive)
        back = wire.decode_value(tree, memoryview(b"".join(blobs)), [0])
        assert wire.subclass_names(back) == ["Deferred"] and blobs == []


def test_a_forged_header_fails_to_decode_instead_of_running_anything():
    with pytest.raises(ValueError, match="unknown dtype"):
        wire.decode_value({"kind": "tensor", "dtype": "os.system", "shape": [1], "nbytes": 4,
                           "type": "Tensor"}, memoryview(b"\0" * 4), [0])
    with pytest.raises((RuntimeError, ValueError)):  # claims more bytes than were sent
        wire.decode_value({"kind": "tensor", "dtype": "float32", "shape": [100], "nbytes": 400,
                           "type": "Tensor"}, memoryview(b"\0" * 8), [0])


def test_messages_larger_than_a_pipe_arrive_whole_and_a_closed_pipe_is_eof():
    read_end, write_end = os.pipe()
    payload = os.urandom(3 << 20)  # far beyond a pipe's buffer: the writer blocks meanwhile
    writer = threading.Thread(target=wire.write_message,
                              args=(write_end, {"op": "run", "n": 1}, [payload[:10], payload[10:]]))
    writer.start()
    header, body = wire.read_message(read_end)
    writer.join()
    assert header == {"op": "run", "n": 1} and bytes(body) == payload
    os.close(write_end)
    with pytest.raises(EOFError):
        wire.read_message(read_end)
    os.close(read_end)


LOADING = wire.Loading(problem="/problems/level1/2_ReLU.py", candidate="/set/level1/2_ReLU.py",
                       seed=7, device="cuda:1", mode="eval", precision="bf16", tf32="on",
                       order_trials=True, lockstep=True, env={"TORCH_EXTENSIONS_DIR": "/b/x"})
# One request of each kind, every field away from its default.
REQUESTS = [
    wire.Ping(policy='{"scratch": "/tmp/s"}'),
    wire.IpcProbe(device="cuda:1"),
    wire.Release(),
    wire.Load(LOADING),
    wire.Run(LOADING, input_seed=1042, settle_inputs=True, order="inputs_late", cuda_ipc=True),
    wire.Time(LOADING, input_seeds=(9042, 9043), budget_s=0.5, min_rounds=4, timing="graph",
              with_baseline=False, max_rounds=20, target_rse=0.01, baseline="max-autotune",
              thresholds=(1.0, 2.0), cuda_ipc=True),
    wire.Burst(LOADING, input_seeds=(1, 2), calls=9, side="baseline", baseline="inductor"),
    wire.Pace(LOADING, steps=300),
    wire.Profile(LOADING, input_seed=1000, profiler=False),
    wire.Ncu(LOADING, input_seed=1000, policy='{"network": true}'),
]


def test_every_request_kind_has_an_example_here():
    assert {type(request) for request in REQUESTS} == set(wire.REQUEST_KINDS.values())


@pytest.mark.parametrize("request_", REQUESTS, ids=lambda request: request.op)
def test_a_request_comes_back_from_its_json_header_as_the_same_typed_request(request_):
    header = json.loads(json.dumps(wire.encode_request(request_)))
    assert header["op"] == request_.op
    assert wire.decode_request(header) == request_


def test_a_header_with_only_the_required_fields_takes_each_default_from_the_request_type():
    header = {"op": "time", "input_seeds": [1, 2], "budget_s": 0.1, "min_rounds": 3,
              "loading": {"problem": "p.py", "candidate": "c.py", "seed": 42, "device": "cpu",
                          "mode": "train", "precision": "fp32", "tf32": "off"}}
    decoded = wire.decode_request(header)
    assert decoded == wire.Time(wire.Loading("p.py", "c.py", 42, "cpu", "train", "fp32", "off"),
                                input_seeds=(1, 2), budget_s=0.1, min_rounds=3)
    assert isinstance(decoded, wire.Time) and decoded.with_baseline is True
    assert decoded.loading.env == {} and decoded.thresholds == ()


def _without(mapping: dict, *names: str) -> dict:
    return {name: value for name, value in mapping.items() if name not in names}


RUN = wire.encode_request(wire.Run(LOADING, input_seed=1))


@pytest.mark.parametrize("header, refusal", [
    ({"op": "rerun"}, "unknown request op 'rerun' (known: ping, ipc_probe, release, load, run, "),
    (_without(RUN, "op"), "unknown request op None"),
    (_without(RUN, "input_seed"), "a run request lacks required fields: input_seed"),
    ({**RUN, "loading": _without(RUN["loading"], "precision", "tf32")},
     "the loading of a run request lacks required fields: precision, tf32"),
    ({**RUN, "input_sed": 1}, "a run request carries fields it does not know: input_sed"),
    ({**RUN, "loading": "p.py"}, "the loading of a run request is not an object: 'p.py'"),
    ({"op": "release", "policy": None}, "a release request carries fields it does not know"),
])
def test_an_unknown_op_or_a_missing_or_unknown_field_is_refused_saying_which(header, refusal):
    with pytest.raises(wire.BadRequest) as refused:
        wire.decode_request(header)
    assert str(refused.value).startswith(refusal)
