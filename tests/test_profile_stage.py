"""judge/profile_stage.py: Nsight Compute's figures in the record, or why not, through a
stand-in channel and a stand-in for ncu's run (no GPU, no ncu)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from pytest_kernelbench import faults
from pytest_kernelbench.isolation import ncu, wire
from pytest_kernelbench.judge import profile_stage
from pytest_kernelbench.judge.outcome import Outcome, base_record
from pytest_kernelbench.suite.discovery import Case, Problem

CASE = Case(Problem(1, 1, "Twice", Path("1_Twice.py")), "set", "s0", None)
LOADING = wire.Loading(problem="1_Twice.py", candidate="twice.py", seed=42, device="cuda:0",
                       mode="train", precision="fp32", tf32="off")


class Channel:
    deadline = SimpleNamespace(left_s=lambda: 30.0)

    def __init__(self):
        self.sandbox = SimpleNamespace(env={"PATH": "/usr/bin"},
                                       profiled=lambda request, folder: request)

    def loading(self, case):
        return LOADING


def context(device: str, profile: bool):
    return SimpleNamespace(settings=SimpleNamespace(profile=profile, seed=42), device=device,
                           channel=Channel(), input_seed=lambda trial: 1000 + trial)


def judged() -> Outcome:
    record = base_record(CASE)
    record.update({"status": faults.PASSED, "custom_kernels": ["twice_kernel"]})
    return Outcome(faults.PASSED, record=record)


def test_profiles_only_when_asked_and_on_a_cuda_device():
    assert profile_stage.profiles(context("cuda:0", True))
    assert not profile_stage.profiles(context("cpu", True))
    assert not profile_stage.profiles(context("cuda:0", False))


def test_without_profiling_the_verdict_and_its_record_are_kept(monkeypatch):
    monkeypatch.setattr(ncu, "profile", lambda *args: (_ for _ in ()).throw(AssertionError))
    before = judged()
    after = profile_stage.profile_case(context("cpu", True), CASE, before)
    assert after.status == before.status and after.record == before.record
    assert after.record is not before.record


def test_ncus_figures_for_the_candidates_kernels_land_in_the_record(monkeypatch):
    asked = []

    def profile(request, env, kernels, left_s, folder):
        asked.append((request, kernels, left_s))
        return [{"name": "twice_kernel", "dram_bytes": 64}], ""

    monkeypatch.setattr(ncu, "profile", profile)
    outcome = profile_stage.profile_case(context("cuda:0", True), CASE, judged())
    assert outcome.passed and outcome.record["ncu_kernels"] == [{"name": "twice_kernel",
                                                                  "dram_bytes": 64}]
    assert outcome.record["ncu_error"] is None and "ncu" in outcome.record["harness_s"]
    [(request, kernels, left_s)] = asked
    assert request == wire.Ncu(LOADING, input_seed=1000) and kernels == ["twice_kernel"]
    assert left_s == 30.0


def test_why_ncu_gave_no_figures_is_recorded(monkeypatch):
    monkeypatch.setattr(ncu, "profile", lambda *args: (None, "ncu is not installed"))
    outcome = profile_stage.profile_case(context("cuda:0", True), CASE, judged())
    assert outcome.record["ncu_kernels"] is None
    assert outcome.record["ncu_error"] == "ncu is not installed"
