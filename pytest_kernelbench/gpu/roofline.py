"""Speed of light: how far a timed call is from what the device can do at best.

For a problem, the work is its FLOPs (torch.utils.flop_counter: matmuls, convolutions,
attention and the other operators it has formulas for; the rest count as zero) and the minimal bytes any
implementation must move: inputs and output once, weights once. The device's ceilings are
measured, not taken from a datasheet: a large device-to-device copy for bandwidth and a large
matmul in the problem's dtype for arithmetic (fp32 also on TF32 tensor cores), each raised to
whatever a timed call reached, so no fraction passes 1. A call's fraction of the speed of light
is the time the better-bound ceiling allows divided by the time it took.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from pytest_kernelbench.nested import nbytes

COPY_BYTES = {"cuda": 1 << 30, "cpu": 1 << 26}
MATMUL_SIZE = {"cuda": 8192, "cpu": 1024}
REPEATS = 10
CPU_MATMUL_PROBE = 256
CPU_MATMUL_CALL_S = 0.1


@dataclass(frozen=True)
class Cost:
    flops: int
    min_bytes: int

    def as_dict(self) -> dict:
        return {"flops": self.flops, "min_bytes": self.min_bytes}


@dataclass(frozen=True)
class Ceilings:
    bytes_per_s: float  # copy bandwidth, bytes read plus bytes written
    flops_per_s: float  # dense matmul rate in the dtype

    def as_dict(self) -> dict:
        return {"bytes_per_s": self.bytes_per_s, "flops_per_s": self.flops_per_s}


def problem_cost(model, inputs: list) -> Cost:
    """FLOPs of one forward, and the bytes of inputs, output and weights."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    counter = FlopCounterMode(display=False)
    with torch.no_grad(), counter:
        output = model(*inputs)
    weights = sum(nbytes(t) for t in model.parameters()) \
        + sum(nbytes(t) for t in model.buffers())
    return Cost(int(counter.get_total_flops()),
                nbytes(list(inputs)) + nbytes(output) + weights)


def fraction(cost: Cost, seconds: float, ceilings: Ceilings) -> float | None:
    """Share of the speed of light reached by a call that took `seconds` (1.0 = at the limit)."""
    if seconds <= 0:
        return None
    best_s = max(cost.flops / ceilings.flops_per_s, cost.min_bytes / ceilings.bytes_per_s)
    return best_s / seconds


def measure_ceilings(device: str, dtype_name: str = "float32") -> Ceilings:
    """Measured copy bandwidth and matmul rate of the device (best of a few calls each)."""
    import torch

    kind = "cuda" if device.startswith("cuda") else "cpu"
    dtype = getattr(torch, dtype_name)
    source = torch.empty(COPY_BYTES[kind] // 4, dtype=torch.float32, device=device)
    target = torch.empty_like(source)
    copy_s = _best_time(lambda: target.copy_(source), device)
    n = MATMUL_SIZE[kind] if kind == "cuda" else _cpu_matmul_size(dtype)
    a = torch.randn(n, n, device=device).to(dtype)
    b = torch.randn(n, n, device=device).to(dtype)
    matmul_s = _best_time(lambda: torch.mm(a, b), device)
    if kind == "cuda" and dtype == torch.float32:
        # fp32 operands on TF32 tensor cores pass the tolerances too: that rate is the limit
        flags = torch.backends.cuda.matmul
        before, flags.allow_tf32 = flags.allow_tf32, True
        try:
            matmul_s = min(matmul_s, _best_time(lambda: torch.mm(a, b), device))
        finally:
            flags.allow_tf32 = before
    return Ceilings(2 * source.numel() * 4 / copy_s, 2 * n**3 / matmul_s)


def raised(ceilings: Ceilings, cost: Cost, seconds: float) -> Ceilings:
    """The ceilings, raised to what a call that took `seconds` reached: it moved its bytes and
    did its FLOPs in that time, so the device can do at least that (a copy is not always the
    fastest way to move memory: simple elementwise kernels beat torch's by a few percent)."""
    if seconds <= 0:
        return ceilings
    return Ceilings(max(ceilings.bytes_per_s, cost.min_bytes / seconds),
                    max(ceilings.flops_per_s, cost.flops / seconds))


def _cpu_matmul_size(dtype) -> int:
    """The CPU's matmul size for dtype: MATMUL_SIZE, or smaller where one call would take over
    CPU_MATMUL_CALL_S (half precision has no fast kernel on most CPUs: a 1024^3 fp16 product
    takes seconds there), sized from one call at the smallest size."""
    import torch

    a = torch.randn(CPU_MATMUL_PROBE, CPU_MATMUL_PROBE).to(dtype)
    torch.mm(a, a)
    started = time.perf_counter()
    torch.mm(a, a)
    probe_s = max(time.perf_counter() - started, 1e-9)
    scaled = CPU_MATMUL_PROBE * (CPU_MATMUL_CALL_S / probe_s) ** (1 / 3)
    return int(min(MATMUL_SIZE["cpu"], max(CPU_MATMUL_PROBE, scaled // 64 * 64)))


def _best_time(fn, device: str) -> float:
    """Best of a few calls, by CUDA events on a GPU: a host clock around a sub-millisecond copy
    also counts the launch and the synchronisation, and a ceiling it reads too low lets simple
    elementwise kernels appear to pass the speed of light."""
    import torch

    fn()
    best = float("inf")
    for _ in range(REPEATS):
        if device.startswith("cuda"):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            best = min(best, start.elapsed_time(end) / 1e3)
        else:
            started = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - started)
    return best
