"""The profile stage (--kb-profile, CUDA only): Nsight Compute's figures for each kernel of
one call, in a process of its own under ncu, within what is left of the stage's deadline."""

from __future__ import annotations

import tempfile
import time
from dataclasses import replace
from pathlib import Path

from pytest_kernelbench.isolation import ncu, wire
from pytest_kernelbench.judge.context import StageContext
from pytest_kernelbench.judge.outcome import Outcome
from pytest_kernelbench.record import charge, copy_of
from pytest_kernelbench.suite.discovery import Case


def profiles(ctx: StageContext) -> bool:
    return ctx.settings.profile and ctx.device.startswith("cuda")


def profile_case(ctx: StageContext, case: Case, judged: Outcome) -> Outcome:
    """judged, its record holding ncu's figures (ncu_kernels) or why not (ncu_error)."""
    record = copy_of(judged.record)
    if not profiles(ctx):
        return replace(judged, record=record)
    started = time.perf_counter()
    channel = ctx.channel
    with tempfile.TemporaryDirectory(prefix="kb-ncu-") as folder:
        request = channel.sandbox.profiled(
            wire.Ncu(channel.loading(case), input_seed=ctx.input_seed(0)), Path(folder))
        kernels, why = ncu.profile(request, channel.sandbox.env,
                                   record.get("custom_kernels") or [],
                                   channel.deadline.left_s(), Path(folder))
    charge(record, "ncu", time.perf_counter() - started)
    record.update({"ncu_kernels": kernels, "ncu_error": why or None})
    return replace(judged, record=record)
