"""judge/compile_stage.py: a candidate's load in its worker, through a stand-in worker channel,
with the problem's reference checked first (no worker process, no build)."""

from __future__ import annotations

import functools
import textwrap
from pathlib import Path

import pytest

from pytest_kernelbench import faults
from pytest_kernelbench.isolation.sandbox import Fault, Reply
from pytest_kernelbench.judge import answers
from pytest_kernelbench.judge.answers import AnswerChecks
from pytest_kernelbench.judge.compile_stage import (
    USES_PROBLEM_NAMES,
    BuildFacts,
    compile_case,
    note_outside_names,
    waits_for_a_build,
)
from pytest_kernelbench.judge.context import StageContext
from pytest_kernelbench.judge.outcome import ProblemError, base_record
from pytest_kernelbench.judge.reference import ReferenceSide
from pytest_kernelbench.settings import Settings
from pytest_kernelbench.suite.discovery import Candidate, Case, Problem

PROBLEM = """
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return x * 2

def get_inputs():
    return [torch.randn(8)]

def get_init_inputs():
    return []
"""
BUILDS = "from torch.utils.cpp_extension import load_inline\n"
NO_BUILD = BuildFacts(started_s=0.0, waited_s=None, entry_of=lambda folder: None)


class Sandbox:
    start_s = 0.5
    start_parts = {"import_torch": 0.25}


class Channel:
    """The worker channel's seam for the load: every request answered with reply."""

    sandbox = Sandbox()

    def __init__(self, reply: Reply | Fault):
        self.reply = reply
        self.ops: list[str] = []

    def loading(self, case):
        return case

    def ask(self, record, request):
        self.ops.append(request.op)
        return self.reply


def stage(tmp_path: Path, source: str, reply: Reply | Fault, device: str = "cpu",
          problem: str = PROBLEM) -> tuple[StageContext, Case, Channel]:
    problem_path = tmp_path / "1_Twice.py"
    problem_path.write_text(textwrap.dedent(problem))
    candidate = tmp_path / "cand.py"
    candidate.write_text(source)
    case = Case(Problem(1, 1, "Twice", problem_path), "set", "s0",
                Candidate("set", 1, 1, "s0", candidate))
    settings = Settings(problems_dir=tmp_path, candidate_dirs=())
    reference = ReferenceSide(settings, device, functools.partial(answers.tolerances,
                                                                  settings, {}))
    channel = Channel(reply)
    ctx = StageContext(settings, device, reference, AnswerChecks(settings, reference, {}),
                       channel)  # type: ignore[arg-type]
    return ctx, case, channel


def test_a_candidate_its_worker_loads_compiles(tmp_path):
    ctx, case, channel = stage(tmp_path, "import torch\nimport threading\n",
                               Reply({"phases": {"import": 0.1}}))
    outcome = compile_case(ctx, case, NO_BUILD)
    assert outcome.passed and outcome.record["compiled"] is True and channel.ops == ["load"]
    assert outcome.record["extension"] == "none"
    assert outcome.record["upstream"]["compiled"] is True
    assert any("starts threads" in note for note in outcome.record["static_scan"])
    assert outcome.record["load_phases"] == {"worker_start": 0.5, "import_torch": 0.25,
                                             "import": 0.1}


def test_a_candidate_its_worker_cannot_load_fails_with_the_workers_status(tmp_path):
    fault = Fault(faults.NO_MODEL_NEW, "no ModelNew in the candidate")
    ctx, case, _ = stage(tmp_path, "import torch\n", fault)
    outcome = compile_case(ctx, case, NO_BUILD)
    assert outcome.status == faults.NO_MODEL_NEW and not outcome.skipped
    assert outcome.record["compiled"] is False and outcome.record["upstream"]["compiled"] is False


def test_a_set_without_a_candidate_for_the_problem_is_missing(tmp_path):
    ctx, case, channel = stage(tmp_path, "", Reply({}))
    bare = Case(case.problem, "set", "s0", None)
    outcome = compile_case(ctx, bare, NO_BUILD)
    assert outcome.status == faults.MISSING and outcome.skipped and channel.ops == []


def test_a_cuda_only_candidate_on_a_cpu_run_is_skipped_before_its_worker_is_asked(tmp_path):
    ctx, case, channel = stage(tmp_path, "import torch\nx = torch.ones(1).cuda()\n", Reply({}))
    outcome = compile_case(ctx, case, NO_BUILD)
    assert outcome.status == faults.UNSUPPORTED_DEVICE and outcome.skipped and channel.ops == []


def test_a_broken_problem_is_found_before_the_candidate_is_loaded(tmp_path):
    broken = PROBLEM.replace("return [torch.randn(8)]", "raise ValueError('no inputs')")
    ctx, case, channel = stage(tmp_path, "import torch\n", Reply({}), problem=broken)
    with pytest.raises(ProblemError, match="no inputs"):
        compile_case(ctx, case, NO_BUILD)
    assert channel.ops == []


def test_names_taken_from_the_problems_namespace_are_recorded_and_flagged():
    made = base_record(Case(Problem(1, 1, "Twice", Path("1_Twice.py")), "set", "s0", None))
    note_outside_names(made, [])
    assert made["outside_names"] == [] and not made.get("flags")
    note_outside_names(made, ["helper", "SIZE"])
    [flag] = made["flags"]
    assert flag.startswith(f"{USES_PROBLEM_NAMES}: helper, SIZE")


@pytest.mark.parametrize("source, device, waits", [
    (BUILDS, "cpu", True),
    (BUILDS, "cuda:0", True),
    (BUILDS + "x = torch.ones(1).cuda()\n", "cpu", False),  # skipped on a CPU: nothing to wait for
    ("import torch\n", "cuda:0", False),
])
def test_only_a_candidate_that_builds_for_this_device_waits_for_the_build_pool(source, device,
                                                                              waits):
    assert waits_for_a_build(source, device) is waits
