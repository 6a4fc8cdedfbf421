"""The three stages of a case -- compile, correct, speed -- as the pytest process runs them.

Candidate code only ever runs in the sandbox worker. This side imports the (trusted) problem,
computes reference outputs from its own inputs, and judges what the worker sends back.
Each stage result is memoised per case, so a later stage reuses an earlier verdict, and a stage
run alone (e.g. `-m kb_speed`, or on another xdist worker) first runs the stages it needs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_kernelbench import correctness, faults, loading, timing
from pytest_kernelbench.discovery import Case
from pytest_kernelbench.manifest import Entry
from pytest_kernelbench.options import Settings
from pytest_kernelbench.sandbox import Fault, Sandbox

CUDA_ONLY = re.compile(r"__global__|cuda_sources|\.cuda\(\)|device\s*=\s*['\"]cuda")
INPUT_SEED_OFFSET = 1_000  # trial t draws inputs with seed + INPUT_SEED_OFFSET + t
TIMING_SEED_OFFSET = 9_000


@dataclass
class Outcome:
    """What one stage concluded. `skipped` marks a stage that could not run, not a failure."""

    status: str
    message: str = ""
    details: str = ""
    skipped: bool = False
    record: dict = field(default_factory=dict)
    candidate_samples_s: list[float] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.status == faults.PASSED and not self.skipped


def needs_cuda(source: str) -> bool:
    """Whether a candidate's source can only run on a CUDA device."""
    return bool(CUDA_ONLY.search(source))


class Evaluator:
    def __init__(self, settings: Settings, device: str,
                 overrides: dict[tuple[int, int], Entry] | None = None):
        self.settings = settings
        self.overrides = overrides or {}
        loading.use_exact_fp32()
        self.device = device
        env = {"TRITON_INTERPRET": "1"} if device == "cpu" else {}
        self.sandbox = Sandbox(env, device)
        self._done: dict[tuple[Case, str], Outcome] = {}
        self._problem_path: Path | None = None
        self._problem: Any = None
        self._reference: Any = None
        self._expected: dict[int, Any] = {}

    def close(self) -> None:
        self.sandbox.close()

    # --- stages ---------------------------------------------------------------------------

    def compile(self, case: Case) -> Outcome:
        return self._memo(case, "compile", self._compile)

    def correct(self, case: Case) -> Outcome:
        return self._memo(case, "correct", self._correct)

    def speed(self, case: Case) -> Outcome:
        return self._memo(case, "speed", self._speed)

    def _memo(self, case: Case, stage: str, run) -> Outcome:
        key = (case, stage)
        if key not in self._done:
            self._done[key] = run(case)
        return self._done[key]

    def _compile(self, case: Case) -> Outcome:
        record = base_record(case)
        if case.candidate is None:
            record.update(status=faults.MISSING, error="no candidate in this set")
            return Outcome(faults.MISSING, f"set {case.set_name} has no candidate for "
                           f"{case.problem.key}", skipped=True, record=record)
        if self.device == "cpu" and needs_cuda(case.candidate.path.read_text(errors="replace")):
            message = "CUDA-only candidate: needs a CUDA device, this run uses cpu"
            record.update(status=faults.UNSUPPORTED_DEVICE, error=message)
            return Outcome(faults.UNSUPPORTED_DEVICE, message, skipped=True, record=record)
        reply = self.sandbox.request(self._request("load", case), self.settings.timeout_s)
        if isinstance(reply, Fault):
            record.update(compiled=False, correct=False, status=reply.status, error=reply.message)
            return Outcome(reply.status, reply.message, reply.details, record=record)
        record.update(compiled=True)
        return Outcome(faults.PASSED, record=record)

    def _correct(self, case: Case) -> Outcome:
        compiled = self.compile(case)
        if not compiled.passed:
            return skipped_after(compiled, "compile")
        record = dict(compiled.record)
        budget = self.settings.timeout_s
        for trial in range(self.settings.trials):
            expected = self._expected_output(case, trial)
            request = self._request("run", case, input_seed=self._input_seed(trial))
            reply = self.sandbox.request(request, budget)
            if isinstance(reply, Fault):
                message = f"trial {trial}: {reply.message}"
                record.update(correct=False, status=reply.status, error=message)
                return Outcome(reply.status, message, reply.details, record=record)
            budget = max(budget - reply.wall_s, 0.001)
            atol, rtol = self.tolerances(case)
            verdict = correctness.compare(expected, reply.value, atol, rtol)
            if not verdict.passed:
                message = f"trial {trial} (input seed {self._input_seed(trial)}): {verdict.message}"
                record.update(correct=False, status=verdict.status, error=message)
                return Outcome(verdict.status, message, record=record)
        record.update(correct=True, status=faults.PASSED, error=None)
        return Outcome(faults.PASSED, record=record)

    def _speed(self, case: Case) -> Outcome:
        checked = self.correct(case)
        if not checked.passed:
            return skipped_after(checked, "correct")
        record = dict(checked.record)
        request = self._request("time", case, input_seed=self.settings.seed + TIMING_SEED_OFFSET,
                                budget_s=self.settings.time_budget_s,
                                min_rounds=self.settings.min_rounds)
        reply = self.sandbox.request(request, self.settings.timeout_s)
        if isinstance(reply, Fault):
            message = f"while timing: {reply.message}"
            record.update(status=reply.status, error=message)
            return Outcome(reply.status, message, reply.details, record=record)
        samples = reply.header["samples_s"]
        baseline = timing.summarize(samples["baseline"])
        candidate = timing.summarize(samples["candidate"])
        ratio = timing.speedup(baseline, candidate)
        record.update(speedup=ratio, baseline_time=baseline.median_s,
                      candidate_time=candidate.median_s,
                      baseline_stats=baseline.as_dict(), candidate_stats=candidate.as_dict())
        p = self.settings.p
        if ratio > p:
            return Outcome(faults.PASSED, record=record, candidate_samples_s=samples["candidate"])
        return Outcome(faults.SLOWER, f"speedup {ratio:.3f} is not above p={p:g} (baseline "
                       f"{baseline.median_s * 1e6:.1f} us, candidate "
                       f"{candidate.median_s * 1e6:.1f} us, medians)", record=record)

    # --- helpers --------------------------------------------------------------------------

    def tolerances(self, case: Case) -> tuple[float, float]:
        """The run's tolerances, unless the manifest documents this problem's own."""
        entry = self.overrides.get((case.problem.level, case.problem.problem_id))
        atol = entry.atol if entry and entry.atol is not None else self.settings.atol
        rtol = entry.rtol if entry and entry.rtol is not None else self.settings.rtol
        return atol, rtol

    def _input_seed(self, trial: int) -> int:
        return self.settings.seed + INPUT_SEED_OFFSET + trial

    def _request(self, op: str, case: Case, **extra) -> dict:
        assert case.candidate is not None
        return {"op": op, "problem": str(case.problem.path), "candidate": str(case.candidate.path),
                "seed": self.settings.seed, "device": self.device, "mode": self.settings.mode,
                **extra}

    def _expected_output(self, case: Case, trial: int) -> Any:
        """Reference output for a trial, computed here and kept while the problem stays."""
        import torch

        if self._problem_path != case.problem.path:
            self._problem_path = case.problem.path
            self._problem = loading.import_file(case.problem.path, "kb_problem")
            init_args = loading.make_init_args(self._problem, self.settings.seed, self.device)
            self._reference = loading.build_model(self._problem.Model, init_args,
                                                  self.settings.seed, self.device,
                                                  self.settings.mode)
            self._expected = {}
        if trial not in self._expected:
            inputs = loading.make_inputs(self._problem, self._input_seed(trial), self.device)
            with torch.no_grad():
                self._expected[trial] = self._reference(*inputs)
        return self._expected[trial]


def base_record(case: Case) -> dict:
    return {
        "level": case.problem.level,
        "problem_id": case.problem.problem_id,
        "problem": case.problem.name,
        "candidate_set": case.set_name,
        "sample": case.sample,
        "candidate_path": str(case.candidate.path) if case.candidate else None,
        "compiled": False,
        "correct": False,
        "speedup": None,
        "baseline_time": None,
        "candidate_time": None,
        "status": None,
        "error": None,
    }


def skipped_after(earlier: Outcome, stage: str) -> Outcome:
    reason = earlier.message if earlier.skipped else f"{stage} failed ({earlier.status})"
    return Outcome(earlier.status, reason, skipped=True, record=dict(earlier.record))
