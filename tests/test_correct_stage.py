"""judge/correct_stage.py: the seeded trials of a case, judged against the reference side of a
tiny CPU problem, with a stand-in worker channel whose candidate answers as each test says."""

from __future__ import annotations

import functools
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_kernelbench import faults
from pytest_kernelbench.isolation.sandbox import Fault, Reply
from pytest_kernelbench.judge import answers, upstream
from pytest_kernelbench.judge.answers import AnswerChecks
from pytest_kernelbench.judge.context import StageContext
from pytest_kernelbench.judge.correct_stage import Trials, correct_case
from pytest_kernelbench.judge.outcome import Outcome, base_record
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

# What a stand-in candidate returns for a trial: (the reference side, the trial's input seed,
# how many runs it has answered before) -> a Reply or a Fault.
Answer = Callable[[ReferenceSide, int, int], "Reply | Fault"]


class Channel:
    """The worker channel's seam for the trials: each "run" answered by answer()."""

    order_trials = False
    started_s = 0.0

    def __init__(self, reference: ReferenceSide, answer: Answer):
        self.reference, self.answer = reference, answer
        self.seeds: list[int] = []

    def loading(self, case):
        return case

    def ask(self, record, request):
        assert request.op == "run"
        reply = self.answer(self.reference, request.input_seed, len(self.seeds))
        self.seeds.append(request.input_seed)
        return reply


def right(reference: ReferenceSide, seed: int, _: int) -> Reply:
    return Reply({}, value=reference.inputs(seed)[0] * 2)


def stage(tmp_path: Path, answer: Answer, **fields) -> tuple[StageContext, Case, Channel]:
    problem = tmp_path / "1_Twice.py"
    problem.write_text(textwrap.dedent(PROBLEM))
    candidate = tmp_path / "cand.py"
    candidate.write_text("import torch\n")
    case = Case(Problem(1, 1, "Twice", problem), "set", "s0",
                Candidate("set", 1, 1, "s0", candidate))
    settings = Settings(problems_dir=tmp_path, candidate_dirs=(), **fields)
    reference = ReferenceSide(settings, "cpu", functools.partial(answers.tolerances, settings, {}))
    channel = Channel(reference, answer)
    ctx = StageContext(settings, "cpu", reference, AnswerChecks(settings, reference, {}),
                       channel)  # type: ignore[arg-type]
    return ctx, case, channel


def compiled(case: Case) -> Outcome:
    record = base_record(case)
    record.update({"compiled": True, "extension": "none",
                   "upstream": upstream.UpstreamVerdict("v0", compiled=True).as_dict()})
    return Outcome(faults.PASSED, record=record)


def test_a_candidate_right_at_every_trial_is_correct_by_both_verdicts(tmp_path):
    ctx, case, channel = stage(tmp_path, right)
    outcome = correct_case(ctx, case, compiled(case))
    assert outcome.passed and outcome.record["correct"] is True
    assert outcome.record["upstream"]["correct"] is True
    assert channel.seeds == [ctx.input_seed(t) for t in range(ctx.settings.trials)]


def test_a_wrong_answer_fails_its_trial_with_its_input_seed(tmp_path):
    def wrong_at_trial_2(reference, seed, runs):
        return Reply({}, value=reference.inputs(seed)[0] * (3 if runs == 2 else 2))

    ctx, case, _ = stage(tmp_path, wrong_at_trial_2)
    outcome = correct_case(ctx, case, compiled(case))
    assert outcome.status == faults.MISMATCH and outcome.record["correct"] is False
    assert outcome.message.startswith(f"trial 2 (input seed {ctx.input_seed(2)})")
    assert outcome.record["upstream"]["correct"] is False


def test_an_answer_for_an_earlier_trials_inputs_is_a_cheat(tmp_path):
    def replays_the_first(reference, seed, runs):
        return right(reference, seed if runs == 0 else ctx.input_seed(0), runs)

    ctx, case, _ = stage(tmp_path, replays_the_first)
    outcome = correct_case(ctx, case, compiled(case))
    assert outcome.status == faults.CHEAT
    assert "returned the answer for the inputs of trial 0" in outcome.message


def test_a_fault_in_the_worker_fails_the_trial_with_its_own_status(tmp_path):
    ctx, case, _ = stage(tmp_path, lambda *_: Fault(faults.RUNTIME_ERROR, "boom", "Traceback"))
    outcome = correct_case(ctx, case, compiled(case))
    assert (outcome.status, outcome.message, outcome.details) == \
        (faults.RUNTIME_ERROR, "trial 0: boom", "Traceback")


@pytest.mark.parametrize("allowed, status", [(False, faults.MUTATED_INPUT),
                                             (True, faults.PASSED)])
def test_a_candidate_that_changes_its_inputs_fails_unless_the_run_allows_it(tmp_path, allowed,
                                                                           status):
    def changes_its_input(reference, seed, runs):
        x = reference.inputs(seed)[0]
        return Reply({}, value=x * 2, extra={"inputs_after": [x + 1]})

    ctx, case, _ = stage(tmp_path, changes_its_input, allow_input_changes=allowed)
    assert correct_case(ctx, case, compiled(case)).status == status


def test_trials_go_on_after_our_verdict_only_while_upstreams_is_open(tmp_path):
    def wrong_for_us_alone(reference, seed, runs):  # within upstream's tolerance, not ours
        x = reference.inputs(seed)[0]
        return Reply({}, value=x * 2, extra={"inputs_after": [x + 1]})

    ctx, case, channel = stage(tmp_path, wrong_for_us_alone)
    outcome = correct_case(ctx, case, compiled(case))
    assert outcome.status == faults.MUTATED_INPUT
    assert outcome.record["upstream"]["correct"] is True  # upstream reads outputs alone
    assert len(channel.seeds) == ctx.settings.trials


def test_one_trial_passes_by_itself(tmp_path):
    ctx, case, _ = stage(tmp_path, right)
    record = compiled(case).record
    trials = Trials(ctx, case, record)
    assert trials.run(0) is None and trials.upstream_correct is True and not trials.failed


def test_a_case_whose_compile_failed_is_not_tried(tmp_path):
    ctx, case, channel = stage(tmp_path, right)
    broken = Outcome(faults.COMPILE_ERROR, "no ModelNew", record=base_record(case))
    outcome = correct_case(ctx, case, broken)
    assert outcome.skipped and outcome.status == faults.COMPILE_ERROR and channel.seeds == []
