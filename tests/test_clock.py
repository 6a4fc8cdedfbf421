"""judge/clock.py: the harness's own clock against a reported time, through a stand-in worker
whose bursts take a set time per call."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from pytest_kernelbench import faults, record
from pytest_kernelbench.judge import clock
from pytest_kernelbench.judge.outcome import Outcome


def fresh() -> record.Record:
    return record.new_record(1, 2, "ReLU", "good", "s0", "good/level1/2_ReLU.py")


class Worker:
    """A worker whose bursts take seconds_per_call[side] per call."""

    def __init__(self, seconds_per_call):
        self.seconds_per_call = seconds_per_call
        self.sides: list[str] = []

    def loading(self, case):
        return case

    def ask(self, record, request):
        self.sides.append(request.side)
        return SimpleNamespace(wall_s=self.seconds_per_call[request.side] * request.calls,
                               header={})


def bursts_of(worker, device="cuda:0"):
    ctx = SimpleNamespace(channel=worker, device=device)
    return clock.Bursts(ctx, case=None, record=fresh(), seeds=[1, 2, 3])


def test_a_reported_time_the_harness_clock_confirms_stands():
    worker = Worker({"candidate": 1e-4})
    clocked = clock.check_clock(bursts_of(worker), 1e-4, "events", 2e-4, [])
    assert clocked == (pytest.approx(1e-4), None, False) and worker.sides == ["candidate"]


def test_a_reported_time_every_burst_contradicts_is_a_cheat():
    worker = Worker({"candidate": 1e-2, "baseline": 2e-4})
    bursts = bursts_of(worker)
    clocked = clock.check_clock(bursts, 1e-4, "events", 2e-4, [])
    assert isinstance(clocked, Outcome) and clocked.status == faults.CHEAT
    assert worker.sides[:clock.BURST_TRIES] == ["candidate"] * clock.BURST_TRIES
    assert bursts.record["candidate_wall_time"] == pytest.approx(1e-2)


def test_a_pair_of_bursts_alternates_which_side_goes_first():
    worker = Worker({"candidate": 1e-4, "baseline": 2e-4})
    bursts = bursts_of(worker)
    medians = {"candidate": 1e-4, "baseline": 2e-4}
    walls: dict[str, list[float]] = {"candidate": [1e-4], "baseline": [2e-4]}
    assert bursts.pair(medians, walls) and bursts.pair(medians, walls)
    assert worker.sides == ["candidate", "baseline", "baseline", "candidate"]
    assert walls["baseline"] == pytest.approx([2e-4] * 3)


def test_on_a_cpu_the_baseline_may_run_slower_in_the_candidates_process_within_the_spread():
    fits = clock.fits_for("cpu")
    assert fits(1e-3, 2.5e-3) and not fits(1e-3, clock.CPU_PROCESS_SPREAD * 1.1e-3)


def test_a_baseline_whose_timed_median_fits_this_process_keeps_the_speedup():
    worker = Worker({"candidate": 1e-4, "baseline": 10e-4})
    bursts = bursts_of(worker, device="cpu")
    bursts.record.update({"baseline_time": 2e-4, "candidate_time": 1e-4, "timing": "events"})
    notes: list[str] = []
    assert clock.unslow_baseline(bursts, 2.0, 2e-4, 10e-4, notes) == 2.0
    assert notes == [] and worker.sides == []
