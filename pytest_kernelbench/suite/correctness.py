"""Comparing a candidate's output with the reference's. Pure functions over tensors.

A leaf passes when it has the reference's shape and dtype, no NaN or Inf where the reference has
none, every element within atol + rtol * |expected| (torch.isclose, as KernelBench checks), and a
whole-tensor relative error ||got - expected|| / ||expected|| within max(atol, rtol). The last
rule keeps outputs that are small next to atol from being passed by zeros.

That rule cannot judge an output whose fp32 value is mostly rounding (a mean of values that
cancel, say): an honest kernel that adds in another order is as far from the fp32 reference as
the reference is from the true value. `within_rounding` settles those against a float64
reference: the candidate passes when it is no further from it than ROUNDING_FACTOR times the
fp32 reference is. Zeros still fail unless the fp32 reference itself is off by more than
1 / ROUNDING_FACTOR of the true value's size, where no fp32 answer can be told from another.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pytest_kernelbench import faults


@dataclass(frozen=True)
class Verdict:
    status: str  # faults.PASSED or a mismatch word
    message: str = ""
    rule: str = ""  # WHOLE_TENSOR when every element passed and only the whole-tensor rule failed

    @property
    def passed(self) -> bool:
        return self.status == faults.PASSED


PASS = Verdict(faults.PASSED)
WHOLE_TENSOR = "whole_tensor"  # Verdict.rule of a failure of the whole-tensor rule alone
ROUNDING_FACTOR = 10.0
BLOCK = 1 << 18  # elements read at a time by compare_tensors (1 MiB of fp32)


def compare(expected: Any, got: Any, atol: float, rtol: float) -> Verdict:
    """Compare nested outputs (tensors, lists, tuples, scalars)."""
    return _compare(expected, got, atol, rtol, "output")


def _compare(expected: Any, got: Any, atol: float, rtol: float, where: str) -> Verdict:
    import torch

    if isinstance(expected, torch.Tensor):
        if not isinstance(got, torch.Tensor):
            return Verdict(faults.STRUCTURE_MISMATCH,
                           f"{where}: expected a tensor, got {type(got).__name__}")
        return compare_tensors(expected, got, atol, rtol, where)
    if isinstance(expected, (list, tuple)):
        if not isinstance(got, (list, tuple)) or len(got) != len(expected):
            got_desc = f"{type(got).__name__} of {len(got)}" if isinstance(got, (list, tuple)) \
                else type(got).__name__
            return Verdict(faults.STRUCTURE_MISMATCH,
                           f"{where}: expected a {type(expected).__name__} of {len(expected)}, "
                           f"got {got_desc}")
        for index, (exp_item, got_item) in enumerate(zip(expected, got)):
            verdict = _compare(exp_item, got_item, atol, rtol, f"{where}[{index}]")
            if not verdict.passed:
                return verdict
        return PASS
    if isinstance(expected, (int, float)) and isinstance(got, (int, float)):
        if abs(got - expected) <= atol + rtol * abs(expected):
            return PASS
        return Verdict(faults.MISMATCH, f"{where}: expected {expected!r}, got {got!r}")
    if expected == got:
        return PASS
    return Verdict(faults.STRUCTURE_MISMATCH, f"{where}: expected {expected!r}, got {got!r}")


def compare_tensors(expected, got, atol: float, rtol: float, where: str = "output") -> Verdict:
    import torch

    if tuple(got.shape) != tuple(expected.shape):
        return Verdict(faults.SHAPE_MISMATCH,
                       f"{where}: shape {tuple(got.shape)}, expected {tuple(expected.shape)}")
    if got.dtype != expected.dtype:
        return Verdict(faults.DTYPE_MISMATCH, f"{where}: dtype {got.dtype}, expected {expected.dtype}")
    if got.numel() == 0:
        return PASS
    got = got.to(expected.device)
    if not expected.is_floating_point() and not expected.is_complex():
        wrong = got != expected
        if not bool(wrong.any()):
            return PASS
        return Verdict(faults.MISMATCH, _describe(expected, got, wrong, where))
    # fp32 arithmetic for fp32 and narrower outputs. On a CPU the tensors are read in blocks
    # that fit a core's cache: each of the rules' passes then stays out of main memory, which
    # made the whole-tensor passes over a large output take seconds. On a GPU one block.
    work = torch.promote_types(expected.dtype, torch.float32)
    exp_flat, got_flat = expected.reshape(-1), got.reshape(-1)
    block = BLOCK if expected.device.type == "cpu" else exp_flat.numel()
    bad_count, first_bad, all_close = 0, -1, True
    ref_square, err_square = 0.0, 0.0
    for start in range(0, exp_flat.numel(), block):
        exp_w = exp_flat[start:start + block].to(work)
        got_w = got_flat[start:start + block].to(work)
        finite = torch.isfinite(exp_w)
        bad = ~torch.isfinite(got_w) & finite
        if bool(bad.any()):
            bad_count += int(bad.sum())
            first_bad = start + int(bad.nonzero()[0]) if first_bad < 0 else first_bad
        if bad_count or not all_close:
            continue  # the verdict is a failure; only NaN/Inf still need counting
        if not bool(torch.isclose(got_w, exp_w, rtol=rtol, atol=atol, equal_nan=True).all()):
            all_close = False
            continue
        if not bool(finite.all()):
            exp_w, got_w = exp_w[finite], got_w[finite]
        ref_square += float(torch.linalg.vector_norm(exp_w)) ** 2
        err_square += float(torch.linalg.vector_norm(got_w - exp_w)) ** 2
    if bad_count:
        index = _unravel(first_bad, got.shape)
        return Verdict(faults.NAN_INF, f"{where}: {bad_count} NaN/Inf element(s) where the "
                       f"reference is finite, first at {index} (expected "
                       f"{expected[index].to(work).item():.6g}, got {got[index].to(work).item()})")
    if not all_close:
        exp_w, got_w = expected.to(work), got.to(work)
        close = torch.isclose(got_w, exp_w, rtol=rtol, atol=atol, equal_nan=True)
        return Verdict(faults.MISMATCH, _describe(exp_w, got_w, ~close, where, atol, rtol))
    if ref_square > 0:
        rel = (err_square / ref_square) ** 0.5
        bound = max(atol, rtol)
        if rel > bound:
            return Verdict(faults.MISMATCH,
                           f"{where}: every element is within atol/rtol, but the whole-tensor "
                           f"relative error is {rel:.3g} > {bound:g} (outputs are small next to "
                           f"atol; a near-zero answer would pass elementwise)", WHOLE_TENSOR)
    return PASS


def within_rounding(expected: Any, got: Any, precise: Any, bound: float) -> float | None:
    """For an output that failed only the whole-tensor rule: the fp32 reference's own relative
    error against `precise` (the reference computed in float64) when got is within the rule
    read against `precise`, else None.

    got passes a leaf when ||got - precise|| <= max(bound * ||precise||,
    ROUNDING_FACTOR * ||expected - precise||).
    """
    import torch

    if isinstance(expected, torch.Tensor):
        if not isinstance(got, torch.Tensor) or not isinstance(precise, torch.Tensor) \
                or not expected.is_floating_point():
            return None
        exact = precise.to(torch.float64)
        exp64 = expected.to(exact.device, torch.float64)
        got64 = got.to(exact.device, torch.float64)
        finite = torch.isfinite(exact) & torch.isfinite(exp64)
        scale = float(torch.linalg.vector_norm(exact[finite]))
        reference_error = float(torch.linalg.vector_norm((exp64 - exact)[finite]))
        candidate_error = float(torch.linalg.vector_norm((got64 - exact)[finite]))
        if candidate_error > max(bound * scale, ROUNDING_FACTOR * reference_error):
            return None
        return reference_error / scale if scale > 0 else float("inf")
    if isinstance(expected, (list, tuple)):
        if not isinstance(got, (list, tuple)) or not isinstance(precise, (list, tuple)):
            return None
        errors = [within_rounding(e, g, p, bound) for e, g, p in zip(expected, got, precise)
                  if isinstance(e, torch.Tensor)]
        return None if not errors or None in errors else max(e for e in errors if e is not None)
    return None


def _describe(expected, got, wrong, where: str, atol: float = 0.0, rtol: float = 0.0) -> str:
    import torch

    diff = (got - expected).abs() if got.is_floating_point() else (got != expected).float()
    excess = diff - (atol + rtol * expected.abs()) if got.is_floating_point() else diff
    flat_index = int(torch.argmax(torch.where(wrong, excess, torch.full_like(excess, -1.0))))
    index = _unravel(flat_index, expected.shape)
    count = int(wrong.sum())
    total = expected.numel()
    text = (f"{where}: {count} of {total} elements ({100 * count / total:.3g}%) differ; "
            f"worst at {index}: expected {expected[index].item():.6g}, got {got[index].item():.6g}")
    if got.is_floating_point():
        rel = diff / expected.abs().clamp_min(1e-12)
        text += (f"; max abs error {float(diff.max()):.3g}, max rel error {float(rel.max()):.3g} "
                 f"(atol {atol:g}, rtol {rtol:g})")
    return text


def _unravel(flat_index: int, shape) -> tuple[int, ...]:
    index = []
    for size in reversed(tuple(shape)):
        index.append(flat_index % size)
        flat_index //= size
    return tuple(reversed(index))
