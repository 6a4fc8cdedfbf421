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
    assert fits(1e-3, 2.5e-3, 1e-3) and not fits(1e-3, clock.CPU_PROCESS_SPREAD * 1.1e-3, 1e-3)


def test_on_a_gpu_only_a_baselines_host_side_may_run_twice_as_long_in_another_process():
    fits = clock.fits_for("cuda:0")
    # GPU-bound, 10 us of 268 issued by the host: 2 x 10 + 1.5 x 258 + the loop's 20 us
    assert fits(268e-6, 426e-6, 10e-6) and not fits(268e-6, 428e-6, 10e-6)
    # launch-bound, the whole call issued by the host: twice it, as any burst may
    assert fits(20e-6, 60e-6, 20e-6) and not fits(20e-6, 61e-6, 20e-6)


def test_a_baseline_whose_timed_median_fits_this_process_keeps_the_speedup():
    worker = Worker({"candidate": 1e-4, "baseline": 10e-4})
    bursts = bursts_of(worker, device="cpu")
    bursts.ctx.reference = Baseline(2e-4, 2e-4)
    bursts.record.update({"baseline_time": 2e-4, "candidate_time": 1e-4, "timing": "events"})
    notes: list[str] = []
    assert clock.unslow_baseline(bursts, 2.0, 2e-4, 10e-4, notes) == 2.0
    assert notes == [] and worker.sides == []


class Baseline:
    """This process's side of the baseline: its burst here, issuing_s of it on the host."""

    def __init__(self, here_s: float, issuing_s: float):
        self.here_s, self.issuing_s = here_s, issuing_s

    def issue_s(self) -> float:
        return self.issuing_s

    def inputs(self, seed):
        return []

    def baseline_wall_s(self, sets) -> float:
        return self.here_s


def slowed_there(monkeypatch, here_s, issuing_s, there_s, pace, candidate_there_s):
    """unslow_baseline on a GPU where every burst of the baseline in the candidate's process
    takes there_s and the harness's own code there `pace` times as long as here."""
    worker = Worker({"baseline": there_s, "candidate": candidate_there_s})
    bursts = bursts_of(worker)
    bursts.ctx.reference = Baseline(here_s, issuing_s)
    monkeypatch.setattr(clock.Bursts, "pace", lambda self: (pace, 1.0))
    timed_candidate_s = 331e-6
    bursts.record.update({"baseline_time": there_s * 1.1, "candidate_time": timed_candidate_s,
                          "timing": "events"})
    notes: list[str] = []
    ratio = clock.unslow_baseline(bursts, there_s * 1.1 / timed_candidate_s, here_s, there_s, notes)
    return ratio, notes


def test_a_slow_pace_buys_a_gpu_bound_baseline_no_time_beyond_its_host_side(monkeypatch):
    # A ReLU of 270 us on the GPU, 15 us of it issued by the host: a pace read 2.09x slow
    # there does not explain a baseline 8x slower there (a patched operator): it is scaled
    # to this process's figure, and the candidate no faster than it gets no speedup.
    ratio, notes = slowed_there(monkeypatch, 270e-6, 15e-6, 2229e-6, 2.09, 300e-6)
    assert ratio == pytest.approx(286.35e-6 * 1.1 / 331e-6) and ratio < 1
    assert "a process that slow takes at most 286.3 us" in notes[0]


def test_a_slow_pace_still_explains_a_launch_bound_baseline(monkeypatch):
    # 20 us a call, 18 of them issuing it: in a process three times as slow it takes 56 us,
    # and a burst of 90 us there (within a burst's spread of it) is that process, not a patched baseline.
    ratio, notes = slowed_there(monkeypatch, 20e-6, 18e-6, 90e-6, 3.0, 20e-6)
    assert ratio == pytest.approx(90e-6 * 1.1 / 331e-6)
    assert "the process ran slowly" in notes[0]


def test_a_baseline_whose_kernels_run_twice_in_the_candidates_process_is_scaled(monkeypatch):
    # The ReLU's operator patched there to launch its kernel twice: 536 us against 268 us
    # here, within twice it (the host's margin), but its device work doubled, which no slower
    # process explains: the baseline is scaled to this process's figure.
    ratio, notes = slowed_there(monkeypatch, 268e-6, 10e-6, 536e-6, 1.0, 270e-6)
    assert ratio == pytest.approx(268e-6 * 1.1 / 331e-6) and ratio < 1
    assert "its median is scaled by 0.500" in notes[0]


def test_a_gpu_bound_baseline_a_little_slower_in_the_candidates_process_keeps_its_speedup(
        monkeypatch):
    # Bursts there 1.4x those here (another process's allocator, the L2's state): within
    # DEVICE_SPREAD, nothing is scaled.
    ratio, notes = slowed_there(monkeypatch, 268e-6, 10e-6, 375e-6, 1.0, 270e-6)
    assert ratio == pytest.approx(375e-6 * 1.1 / 331e-6) and notes == []


def test_on_a_cpu_the_whole_call_is_host_side():
    assert clock.slowed_baseline_s(1e-3, 1e-3, 2.5) == pytest.approx(2.5e-3)
    assert clock.slowed_baseline_s(1e-3, 1e-5, 2.5) == pytest.approx(1.015e-3)
