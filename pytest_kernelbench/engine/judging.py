"""One case through its stages, and an Evaluator set up for its place among the judging
processes of a run: the same for a pytest-xdist worker and for a judge process of the API."""

from __future__ import annotations

from collections.abc import Callable

from pytest_kernelbench.gpu import devices
from pytest_kernelbench.judge.evaluation import Evaluator
from pytest_kernelbench.judge.speed_stage import times_for_upstream
from pytest_kernelbench.record import Record
from pytest_kernelbench.reporting import heartbeat
from pytest_kernelbench.suite.discovery import Case


def share_device(evaluator: Evaluator, processes: int, gpus: int) -> None:
    """How many timings of the device gather before it drains, given the judging processes of
    the run and the GPUs they spread over; with --kb-drain=stop each goes at once (stopping
    the work that shares a GPU takes a moment, not a drain)."""
    evaluator.timing_batch = 1 if evaluator.settings.drain == "stop" \
        else devices.timing_batch(processes, gpus)


def gpu_count(requested: str, device: str) -> int:
    """How many GPUs the judging processes spread over (devices.bind_device): every visible
    one for a plain 'cuda' (or 'auto' that found CUDA), one for a named index or the CPU."""
    if not device.startswith("cuda") or requested not in ("cuda", "auto"):
        return 1
    import torch

    return max(1, torch.cuda.device_count())


def judge_case(evaluator: Evaluator, case: Case, heartbeat_s: float,
               on_progress: Callable[[heartbeat.Event], None] | None = None) -> Record:
    """The record of one case: its compile, correctness and speed stages in turn, each said as
    it starts, runs and ends (heartbeat.watch), the first that does not pass ending it. Under
    --kb-upstream-timing a failed correctness stage that upstream's rules pass goes on to the
    speed stage, which times the case for upstream's speedup, as a pytest run's speed item does."""
    label = f"{case.problem.key}[{case.id}]"
    outcome = None
    for stage in (evaluator.compile, evaluator.correct, evaluator.speed):
        with heartbeat.watch(label, stage.__name__, heartbeat_s, on_progress) as watched:
            outcome = stage(case)
            watched.status = "skipped" if outcome.skipped else outcome.status
        if not outcome.passed and not (stage == evaluator.correct and
                                       times_for_upstream(evaluator.settings, outcome.record)):
            break
    assert outcome is not None
    return outcome.record

