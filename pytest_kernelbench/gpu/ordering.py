"""Stream-order trials: whether a candidate orders its GPU work with the caller's stream.

A candidate that runs forward on a CUDA stream of its own must make that stream wait for the
caller's stream (which wrote the inputs) and make the caller's stream wait for it (which reads
the output). Without either, its answer depends on timing: right on one run, wrong or fast
beyond belief on the next. An ordinary trial cannot tell reliably; these trials make the
missing order show every time, by delaying one side on the GPU while the other runs ahead:

- inputs_late: the caller's stream sleeps, then writes the inputs. Work that does not wait for
  it reads the buffers before they are written (they hold NaN until then).
- own_streams_late: every stream the candidate made sleeps before forward. A caller's stream
  that does not wait for them reads the output before it is computed.

The output is copied on the caller's stream right after forward returns, as any caller would
use it, and judged against the reference like any trial. Runs in the candidate's worker.
"""

from __future__ import annotations

from typing import Any

from pytest_kernelbench import nested
from pytest_kernelbench.gpu import timing

ORDERS = ("inputs_late", "own_streams_late")
# Spin cycles of one delay (torch.cuda._sleep): about 50 ms at an H200's 1.98 GHz, far longer
# than launching a forward pass takes on the host.
DELAY_CYCLES = 100_000_000

# What identifies each stream made: (device_index, stream_id, device_type). Identities, not
# the stream objects or weak references to them: torch's CUDA stream type keeps a weak-reference
# list that its deallocator does not clear, so a weak reference to a stream that was freed
# points at freed memory (calling it crashed the process on an H200). The CUDA streams behind
# them come from a small pool, so the set stays small however many objects a candidate makes.
_STREAMS: set[tuple[int, int, int]] = set()


def track_streams() -> None:
    """Remember every torch.cuda.Stream made in this process from now on (and none before)."""
    import torch

    _STREAMS.clear()

    stream_class = torch.cuda.Stream
    if getattr(stream_class, "kb_tracked", False):
        return
    make = stream_class.__new__

    def tracked_new(cls, *args, **kwargs):
        stream = make(cls, *args, **kwargs)
        if "stream_id" not in kwargs:  # not torch wrapping one that exists (current_stream())
            _STREAMS.add((stream.device_index, stream.stream_id, stream.device_type))
        return stream

    stream_class.__new__ = staticmethod(tracked_new)  # type: ignore[method-assign]
    stream_class.kb_tracked = True  # type: ignore[attr-defined]


def own_streams(device: str) -> list:
    """The streams the candidate made on device, other than the current stream."""
    import torch

    current = torch.cuda.current_stream(device)
    index = torch.device(device).index
    index = torch.cuda.current_device() if index is None else index
    return [torch.cuda.Stream(stream_id=stream_id, device_index=device_index,
                              device_type=device_type)
            for device_index, stream_id, device_type in sorted(_STREAMS)
            if device_index == index and stream_id != current.stream_id]


def delay(stream=None) -> None:
    """Keep stream (the current one when None) busy on the GPU for about 50 ms."""
    import contextlib

    import torch

    with torch.cuda.stream(stream) if stream is not None else contextlib.nullcontext():
        # torch.cuda._sleep is the one way torch offers to enqueue a GPU-side wait of known
        # length; where a build lacks it, products of large matrices keep the stream busy.
        if hasattr(torch.cuda, "_sleep"):
            torch.cuda._sleep(DELAY_CYCLES)
            return
        square = torch.ones(8192, 8192, device=torch.cuda.current_device())
        for _ in range(3):
            square = square @ square / 8192


def ordered_forward(model, inputs: list, device: str, order: str) -> Any:
    """Run forward with one side delayed (see ORDERS); the output as the caller's stream saw it
    right after forward returned."""
    import torch

    if order not in ORDERS:
        raise ValueError(f"unknown order {order!r}")
    torch.cuda.synchronize(device)
    if order == "inputs_late":
        buffers = [torch.full_like(x, float("nan")) if isinstance(x, torch.Tensor)
                   and x.is_floating_point() else torch.zeros_like(x)
                   if isinstance(x, torch.Tensor) else x for x in inputs]
        torch.cuda.synchronize(device)
        delay()
        timing.refill(buffers, inputs)  # on the caller's stream, after its delay
        inputs = buffers
    else:
        for stream in own_streams(device):
            delay(stream)
    out = timing.forward_async(model, inputs)
    seen = nested.map_leaves(out, lambda t: t.detach().clone())  # on the caller's stream
    torch.cuda.synchronize(device)
    return seen


def describe(order: str) -> str:
    """What a wrong output in an order trial means, for the record."""
    if order == "inputs_late":
        return ("with the caller's stream writing the inputs late, forward read them before "
                "they were written: its work does not wait for the caller's stream")
    return ("with the candidate's own streams delayed, the output read on the caller's stream "
            "was not finished: the caller's stream is not made to wait for them")
