"""Precision modes and tolerance profiles. Pure functions.

`--kb-precision` casts the floating inputs and both models' floating parameters to fp16 or
bf16, as upstream KernelBench's main branch does. The expected output is the reference's in that
same precision, compared with the profile's tolerance for it; where that comparison fails, the
candidate is read against the reference computed in float64 from the same cast inputs and
weights, and passes when it is no further from that than ROUNDING_FACTOR times the
low-precision reference is (correctness.within_rounding): a correct low-precision kernel
rounds differently from the reference, not worse, and a wrong one is far off both.

`--kb-tolerance` names upstream's profiles: v0 (the paper's: 1e-2 at every precision) and
main (1e-4 for fp32, 1e-2 for fp16 and bf16), or ATOL,RTOL. A manifest's per-problem
tolerances are written for v0's 1e-2 and scale with the profile.

A run's numerics (the precision and whether TF32 is allowed) travel as one frozen Numerics,
built from its settings and passed to whatever casts or compares; torch's switches are set from
it once per process (loading.apply).
"""

from __future__ import annotations

from dataclasses import dataclass

PRECISIONS = ("fp32", "fp16", "bf16")
PROFILES: dict[str, dict[str, tuple[float, float]]] = {
    "v0": {"fp32": (1e-2, 1e-2), "fp16": (1e-2, 1e-2), "bf16": (1e-2, 1e-2)},
    "main": {"fp32": (1e-4, 1e-4), "fp16": (1e-2, 1e-2), "bf16": (1e-2, 1e-2)},
}
MANIFEST_BASE = 1e-2  # the tolerance the manifest's per-problem figures are written against
TF32_POLICIES = ("off", "allow")


@dataclass(frozen=True)
class Numerics:
    """How a run computes: the precision floating inputs and parameters are cast to, and
    whether TF32 is allowed in matmuls and convolutions."""

    precision: str  # one of PRECISIONS
    tf32_allowed: bool

    @classmethod
    def of(cls, precision: str, tf32: str) -> Numerics:
        """From the settings' spelling (`--kb-precision`, `--kb-tf32`); ValueError otherwise."""
        if precision not in PRECISIONS or tf32 not in TF32_POLICIES:
            raise ValueError(f"precision must be one of {', '.join(PRECISIONS)} and tf32 one of "
                             f"{', '.join(TF32_POLICIES)}, got {precision!r} and {tf32!r}")
        return cls(precision, tf32 == "allow")

    @property
    def dtype(self):
        """The torch dtype floating values are cast to; None at fp32 (as the problem makes them)."""
        return torch_dtype(self.precision)


EXACT_FP32 = Numerics("fp32", tf32_allowed=False)


def parse_tolerance_profile(text: str) -> str:
    """v0, main, or ATOL,RTOL (two numbers >= 0); ValueError otherwise."""
    if text in PROFILES:
        return text
    parts = text.split(",")
    try:
        values = [float(part) for part in parts]
    except ValueError:
        values = []
    if len(values) != 2 or any(not value >= 0 for value in values):
        raise ValueError(f"tolerance must be v0, main or ATOL,RTOL (two numbers >= 0), "
                         f"got {text!r}")
    return text


def run_tolerance(profile: str, precision: str) -> tuple[float, float]:
    """(atol, rtol) of a profile at a precision."""
    if profile in PROFILES:
        return PROFILES[profile][precision]
    atol, rtol = (float(part) for part in profile.split(","))
    return atol, rtol


def problem_tolerance(run: tuple[float, float], atol: float | None,
                      rtol: float | None) -> tuple[float, float]:
    """A problem's tolerance: the manifest's own (scaled with the run's profile), else the
    run's."""
    return (run[0] if atol is None else atol * run[0] / MANIFEST_BASE,
            run[1] if rtol is None else rtol * run[1] / MANIFEST_BASE)


def torch_dtype(precision: str):
    """The torch dtype of a precision mode; None for fp32 (the problems' own dtype)."""
    import torch

    return {"fp32": None, "fp16": torch.float16, "bf16": torch.bfloat16}[precision]
