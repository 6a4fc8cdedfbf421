"""Framed messages between the pytest process and a sandbox worker.

A message is a JSON header plus raw tensor bytes. Nothing is unpickled: a worker runs untrusted
candidate code, so whatever it sends back must be decodable without executing anything. A
request's header encodes one of the typed requests below, which both ends share.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import struct
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeAlias

HEADER = struct.Struct("<QQ")  # JSON length, payload length


# --- requests -------------------------------------------------------------------------------
# One frozen dataclass per request kind, each default written here once. The pytest process
# builds them (judge/channel.py, isolation/sandbox.py) and the worker decodes each header into
# one before it reads a field (isolation/worker.py).


class BadRequest(ValueError):
    """A request header that names no known op, lacks a field its op needs or carries one its
    op does not know: a mistake of the harness, never of the candidate."""


@dataclass(frozen=True)
class Loading:
    """Which candidate a request is about and how its worker loads it. A worker started for
    any request that carries one loads the candidate from it."""

    problem: str
    candidate: str
    seed: int
    device: str  # as the worker names it
    mode: str
    # the worker's numerics (precision.Numerics.of), applied at load; no precision is assumed
    precision: str
    tf32: str
    order_trials: bool = False  # track the candidate's streams (the stream-order trials)
    lockstep: bool = False  # the reference keeps state: the worker reports its calls
    # the candidate's build folder (TORCH_EXTENSIONS_DIR and the like)
    env: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Ping:
    """A new worker's first request: enter this confinement (confine.Policy as JSON; None:
    unconfined) before anything else runs there."""

    op: ClassVar[str] = "ping"
    policy: str | None = None


@dataclass(frozen=True)
class IpcProbe:
    """A new worker's second request on a GPU: name the GPU, and share a known tensor over
    CUDA IPC to show whether outputs may come back that way."""

    op: ClassVar[str] = "ipc_probe"
    device: str


@dataclass(frozen=True)
class Release:
    """A stage is done: drop the timing draws and the outputs lent over CUDA IPC, and give the
    cached GPU memory back."""

    op: ClassVar[str] = "release"


@dataclass(frozen=True)
class Load:
    """Load the candidate (and say how: its extensions, its numerics, where the time went)."""

    op: ClassVar[str] = "load"
    loading: Loading


@dataclass(frozen=True)
class Run:
    """One correctness trial on the draw of input_seed: the output, and the inputs as left."""

    op: ClassVar[str] = "run"
    loading: Loading
    input_seed: int
    settle_inputs: bool = False  # synchronize once the inputs are made (the order trials' job)
    order: str | None = None  # a stream-order trial (gpu/ordering.ORDERS); None: a plain one
    cuda_ipc: bool = False  # outputs travel as CUDA IPC handles (set by the sandbox)


@dataclass(frozen=True)
class Time:
    """Baseline and candidate timed in turns on the draws of input_seeds."""

    op: ClassVar[str] = "time"
    loading: Loading
    input_seeds: tuple[int, ...]
    budget_s: float
    min_rounds: int
    timing: str = "events"  # or graph: each side captured in a CUDA graph and replayed
    with_baseline: bool = True  # False: the baseline's samples are cached in the pytest process
    max_rounds: int | None = None  # None: the budget and the RSE bound the rounds
    target_rse: float = 0.0
    baseline: str = "eager"  # or a torch.compile mode (loading.as_baseline)
    thresholds: tuple[float, ...] = ()  # speedups the timing may stop once clear of
    cuda_ipc: bool = False  # outputs travel as CUDA IPC handles (set by the sandbox)


@dataclass(frozen=True)
class Burst:
    """calls back-to-back calls, for the pytest process to time by its own clock."""

    op: ClassVar[str] = "burst"
    loading: Loading
    input_seeds: tuple[int, ...]
    calls: int
    side: str = "candidate"  # or baseline, in the candidate's process
    baseline: str = "eager"  # how the baseline is built, where no timing built it here first


@dataclass(frozen=True)
class Pace:
    """steps of the harness's own host work (timing.host_pace), timed by the pytest process."""

    op: ClassVar[str] = "pace"
    loading: Loading
    steps: int


@dataclass(frozen=True)
class Profile:
    """The names of the GPU kernels one call on the draw of input_seed launches."""

    op: ClassVar[str] = "profile"
    loading: Loading
    input_seed: int
    profiler: bool = True  # a profiler session may answer where neither graph nor CUPTI does


@dataclass(frozen=True)
class Ncu:
    """One call under Nsight Compute, in a process of its own (isolation/ncu.py), confined as
    policy says (sandbox.profiled)."""

    op: ClassVar[str] = "ncu"
    loading: Loading
    input_seed: int
    policy: str | None = None


# The requests about one candidate: a worker started for any of them loads it.
CandidateRequest: TypeAlias = Load | Run | Time | Burst | Pace | Profile | Ncu
Request: TypeAlias = Ping | IpcProbe | Release | CandidateRequest
REQUEST_KINDS: dict[str, type[Request]] = {kind.op: kind for kind in (
    Ping, IpcProbe, Release, Load, Run, Time, Burst, Pace, Profile, Ncu)}


def encode_request(request: Request) -> dict[str, Any]:
    """The JSON header of a request: its op and every field, the loading as an object."""
    return {"op": request.op, **dataclasses.asdict(request)}


def decode_request(header: Mapping[str, Any]) -> Request:
    """The typed request a header encodes; BadRequest where it is not one."""
    op = header.get("op")
    kind = REQUEST_KINDS.get(op) if isinstance(op, str) else None
    if kind is None:
        raise BadRequest(f"unknown request op {op!r} (known: {', '.join(REQUEST_KINDS)})")
    values = _fields(kind, {name: value for name, value in header.items() if name != "op"},
                     f"a {op} request")
    if "loading" in values:
        values["loading"] = Loading(**_fields(Loading, values["loading"],
                                              f"the loading of a {op} request"))
    return kind(**values)


def _fields(kind: type, values: Any, what: str) -> dict[str, Any]:
    """values checked against kind's fields, each JSON array back as a tuple."""
    if not isinstance(values, Mapping):
        raise BadRequest(f"{what} is not an object: {values!r}")
    known = {spec.name: spec for spec in dataclasses.fields(kind)}
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise BadRequest(f"{what} carries fields it does not know: {', '.join(unknown)}")
    missing = [name for name, spec in known.items() if name not in values
               and spec.default is dataclasses.MISSING
               and spec.default_factory is dataclasses.MISSING]
    if missing:
        raise BadRequest(f"{what} lacks required fields: {', '.join(missing)}")
    return {name: tuple(value) if isinstance(value, list) else value
            for name, value in values.items()}


# --- framing ----------------------------------------------------------------------------------

def write_message(fd: int, header: Mapping[str, Any], blobs: list[bytes] = ()) -> None:  # type: ignore[assignment]
    head = json.dumps(header).encode()
    payload = b"".join(blobs)
    _write_all(fd, HEADER.pack(len(head), len(payload)) + head)
    _write_all(fd, payload)


def read_message(fd: int) -> tuple[dict, memoryview]:
    """One message; raises EOFError when the other side is gone."""
    json_len, payload_len = HEADER.unpack(_read_exact(fd, HEADER.size))
    header = json.loads(_read_exact(fd, json_len))
    return header, memoryview(_read_exact(fd, payload_len))


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _read_exact(fd: int, size: int) -> bytearray:
    buf = bytearray(size)
    view = memoryview(buf)
    got = 0
    while got < size:
        n = os.readv(fd, [view[got:]])
        if n == 0:
            raise EOFError("peer closed the channel")
        got += n
    return buf


# --- tensors and nested outputs -------------------------------------------------------------

def encode_value(value: Any, blobs: list[bytes], keep_alive: list | None = None) -> dict:
    """A JSON tree describing value; tensor bytes are appended to blobs.

    With keep_alive given, CUDA tensors travel as CUDA IPC handles instead of bytes (no copy
    through host memory); the sender must hold keep_alive until the receiver has copied them.
    """
    import torch

    if isinstance(value, torch.Tensor) and type(value) not in (torch.Tensor, torch.nn.Parameter):
        # A subclass is judged by its type alone: none of its methods (clone, to, even is_cuda)
        # is called, since it may override them to fake or defer work.
        return {"kind": "subclass", "type": type(value).__name__}
    if isinstance(value, torch.Tensor) and keep_alive is not None and value.is_cuda:
        return _share_cuda(value, keep_alive)
    if isinstance(value, torch.Tensor):
        tensor = value.detach()
        cpu = tensor.to("cpu").contiguous()
        raw = cpu.reshape(-1).view(torch.uint8).numpy().tobytes() if cpu.numel() else b""
        blobs.append(raw)
        return {
            "kind": "tensor",
            "dtype": str(cpu.dtype).removeprefix("torch."),
            "shape": list(cpu.shape),
            "nbytes": len(raw),
            "device": str(tensor.device),
            "type": type(value).__name__,
        }
    if isinstance(value, (list, tuple)):
        return {"kind": type(value).__name__,
                "items": [encode_value(v, blobs, keep_alive) for v in value]}
    if value is None or isinstance(value, (bool, int, float, str)):
        return {"kind": "value", "value": value}
    return {"kind": "other", "type": type(value).__name__}


def decode_value(tree: dict, payload: memoryview, offset: list[int],
                 cuda_device: int | None = None) -> Any:
    """Inverse of encode_value; offset is a one-element cursor into payload.

    CUDA IPC tensors are opened on cuda_device, the receiver's index of the sender's GPU (the
    sender may number its GPUs differently); None takes the sender's index.
    """
    import torch

    kind = tree["kind"]
    if kind == "subclass":
        return Subclass(str(tree.get("type")))
    if kind in ("tensor", "cuda_ipc") and tree.get("type") not in PLAIN_TENSOR_TYPES:
        # Skip its bytes; a subclass can defer or fake work, so it is judged by its type alone.
        offset[0] += int(tree.get("nbytes", 0))
        return Subclass(str(tree.get("type")))
    if kind == "tensor":
        dtype = getattr(torch, tree["dtype"], None)
        if not isinstance(dtype, torch.dtype):
            raise ValueError(f"unknown dtype {tree['dtype']!r}")
        start, size = offset[0], int(tree["nbytes"])
        offset[0] += size
        raw = torch.frombuffer(bytearray(payload[start:start + size]), dtype=torch.uint8) \
            if size else torch.empty(0, dtype=torch.uint8)
        shape = [int(n) for n in tree["shape"]]
        return raw.view(dtype).reshape(shape)
    if kind == "cuda_ipc":
        return _open_cuda(tree, int(tree["device"]) if cuda_device is None else cuda_device)
    if kind in ("list", "tuple"):
        items = [decode_value(item, payload, offset, cuda_device) for item in tree["items"]]
        return items if kind == "list" else tuple(items)
    if kind == "value":
        return tree["value"]
    return Unsupported(tree.get("type", "?"))


def _share_cuda(value, keep_alive: list) -> dict:
    import torch

    # A copy of the sender's own: a candidate's tensor may live in a CUDA graph's private pool
    # or be a buffer its next call overwrites, and neither should be mapped into the receiver.
    tensor = value.detach().clone(memory_format=torch.contiguous_format)
    keep_alive.append(tensor)
    (device, handle, size_bytes, offset_bytes, counter_handle, counter_offset, event_handle,
     event_sync) = tensor.untyped_storage()._share_cuda_()
    return {
        "kind": "cuda_ipc", "dtype": str(tensor.dtype).removeprefix("torch."),
        "shape": list(tensor.shape), "storage_offset": tensor.storage_offset(),
        "device": device, "handle": _b64(handle), "size_bytes": size_bytes,
        "offset_bytes": offset_bytes, "counter_handle": _b64(counter_handle),
        "counter_offset": counter_offset, "event_handle": _b64(event_handle),
        "event_sync": bool(event_sync), "type": type(value).__name__,
    }


def _open_cuda(tree: dict, index: int):
    """Map a tensor shared by another process and copy it into memory of our own."""
    import torch

    dtype = getattr(torch, tree["dtype"], None)
    if not isinstance(dtype, torch.dtype):
        raise ValueError(f"unknown dtype {tree['dtype']!r}")
    shape = [int(n) for n in tree["shape"]]
    device = torch.device("cuda", index)
    if int(tree["size_bytes"]) == 0:
        return torch.empty(shape, dtype=dtype, device=device)
    torch.cuda._lazy_init()
    storage = torch.UntypedStorage._new_shared_cuda(
        index, _unb64(tree["handle"]), int(tree["size_bytes"]),
        int(tree["offset_bytes"]), _unb64(tree["counter_handle"]), int(tree["counter_offset"]),
        _unb64(tree["event_handle"]), bool(tree["event_sync"]))
    view = torch.empty(0, dtype=dtype, device=device)
    view.set_(storage, int(tree["storage_offset"]), shape)  # type: ignore[call-overload]
    return view.clone()


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode()


def _unb64(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text)


PLAIN_TENSOR_TYPES = {"Tensor", "Parameter"}


class Subclass:
    """Placeholder for a returned tensor whose type is a subclass of torch.Tensor."""

    def __init__(self, type_name: str):
        self.type_name = type_name

    def __repr__(self) -> str:
        return f"<tensor subclass {self.type_name}>"


def subclass_names(value: Any) -> list[str]:
    """Type names of the tensor-subclass leaves of a decoded value."""
    if isinstance(value, Subclass):
        return [value.type_name]
    if isinstance(value, (list, tuple)):
        return [name for item in value for name in subclass_names(item)]
    return []


class Unsupported:
    """Placeholder for a returned object that is neither tensor, sequence nor scalar."""

    def __init__(self, type_name: str):
        self.type_name = type_name

    def __repr__(self) -> str:
        return f"<{self.type_name}>"
