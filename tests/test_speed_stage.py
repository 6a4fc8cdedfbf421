"""judge/speed_stage.py: how a problem is timed, read from stand-in contexts (no worker)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from pytest_kernelbench.judge import speed_stage


def settings(**fields):
    base = {"p": 1.0, "require_kernel": False, "flag_speedup": 10.0, "timing": "auto"}
    return SimpleNamespace(**{**base, **fields})


def context(device="cpu", keeps_state=False, **fields):
    reference = SimpleNamespace(lockstep=object() if keeps_state else None)
    return SimpleNamespace(settings=settings(**fields), device=device, reference=reference)


@pytest.mark.parametrize("device, keeps_state, wanted, wall_s, mode, noted", [
    ("cpu", False, "graph", 1e-6, "events", True),
    ("cpu", False, "auto", 1e-6, "events", False),
    ("cuda:0", False, "auto", 1e-6, "graph", False),
    ("cuda:0", False, "auto", 1e-3, "events", False),
    ("cuda:0", True, "graph", 1e-6, "events", True),
])
def test_the_timing_mode_follows_the_device_the_reference_and_the_baselines_pace(
        device, keeps_state, wanted, wall_s, mode, noted):
    notes: list[str] = []
    ctx = context(device, keeps_state, timing=wanted)
    assert speed_stage.timing_mode(ctx, wall_s, notes) == mode
    assert bool(notes) == noted
