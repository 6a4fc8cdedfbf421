"""judge/answers.py: what the worker sent back, judged against a reference side of a tiny CPU
problem (right answers, stale answers, changed inputs) and the tolerances it is judged at."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import torch

from pytest_kernelbench import faults, precision
from pytest_kernelbench.isolation import wire
from pytest_kernelbench.judge import answers
from pytest_kernelbench.judge.answers import AnswerChecks, input_seed, timing_seeds
from pytest_kernelbench.judge.reference import ReferenceSide
from pytest_kernelbench.record import new_record
from pytest_kernelbench.settings import Settings
from pytest_kernelbench.suite.discovery import Case, Problem
from pytest_kernelbench.suite.manifest import Entry

SCALE = """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(8))

    def forward(self, x):
        return x * self.scale
"""


def problem_case(folder: Path, body: str = SCALE) -> Case:
    path = folder / "1_Scale.py"
    path.write_text("import torch\nimport torch.nn as nn\n" + textwrap.dedent(body)
                    + "\ndef get_inputs():\n    return [torch.randn(8)]\n"
                    + "\ndef get_init_inputs():\n    return []\n")
    return Case(Problem(1, 1, "Scale", path), "set", "s0", None)


def checks(folder: Path, overrides=None, **fields) -> AnswerChecks:
    settings = Settings(problems_dir=folder, candidate_dirs=(), **fields)
    overrides = overrides or {}
    side = ReferenceSide(settings, "cpu",
                         lambda case: answers.tolerances(settings, overrides, case))
    return AnswerChecks(settings, side, overrides)


def test_each_trial_and_each_timing_draw_has_a_seed_of_its_own():
    settings = Settings(problems_dir=Path("."), candidate_dirs=())
    trials = [input_seed(settings, trial) for trial in range(settings.trials)]
    timed = timing_seeds(settings)
    assert len(set(trials + timed)) == len(trials) + answers.TIMING_INPUT_SETS


def test_the_reference_output_is_the_right_answer(tmp_path):
    case, judge = problem_case(tmp_path), checks(tmp_path)
    seed = input_seed(judge.settings, 0)
    right = judge.right_answer(case, seed, calls=None)
    assert judge.judge(case, seed, right.clone()) is None


def test_an_answer_off_by_more_than_the_tolerance_is_a_mismatch(tmp_path):
    case, judge = problem_case(tmp_path), checks(tmp_path)
    seed = input_seed(judge.settings, 0)
    verdict = judge.judge(case, seed, judge.right_answer(case, seed, None) + 1.0)
    assert verdict is not None and verdict.status == faults.MISMATCH


def test_a_tensor_subclass_the_worker_sent_back_is_a_cheat(tmp_path):
    case, judge = problem_case(tmp_path), checks(tmp_path)
    seed = input_seed(judge.settings, 0)
    right = judge.right_answer(case, seed, None)
    verdict = judge.judge(case, seed, [right, wire.Subclass("Deferred")])
    assert verdict is not None and verdict.status == faults.CHEAT and "Deferred" in verdict.message


def test_an_earlier_trials_answer_is_found_as_stale(tmp_path):
    case, judge = problem_case(tmp_path), checks(tmp_path)
    earlier = judge.right_answer(case, input_seed(judge.settings, 1), None)
    assert judge.stale_answer(case, 3, earlier) == 1
    assert judge.stale_answer(case, 3, earlier + 1.0) is None
    assert judge.stale_answer(case, 1, earlier) is None  # trial 1's own answer is not stale


def test_inputs_left_as_they_were_pass_and_changed_ones_do_not(tmp_path):
    case, judge = problem_case(tmp_path), checks(tmp_path)
    seed = input_seed(judge.settings, 0)
    judge.right_answer(case, seed, None)
    pristine = judge.reference.inputs(seed)
    assert judge.judge_inputs(case, seed, pristine) is None
    assert judge.judge_inputs(case, seed, None) is None  # the worker did not send them
    verdict = judge.judge_inputs(case, seed, [pristine[0] + 1])
    assert verdict is not None and verdict.status == faults.MUTATED_INPUT


def test_changed_inputs_pass_where_the_reference_changes_them_too(tmp_path):
    case = problem_case(tmp_path, """
        class Model(nn.Module):
            def forward(self, x):
                return x.mul_(2)
    """)
    judge = checks(tmp_path)
    seed = input_seed(judge.settings, 0)
    judge.right_answer(case, seed, None)
    assert judge.judge_inputs(case, seed, [judge.reference.inputs(seed)[0] * 2]) is None


def test_against_a_stateful_reference_the_right_answer_follows_the_candidates_calls(tmp_path):
    case = problem_case(tmp_path, """
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.calls = 0

            def forward(self, x):
                self.calls += 1
                return x * self.calls
    """)
    judge = checks(tmp_path)
    seed = input_seed(judge.settings, 0)
    first = judge.right_answer(case, seed, [seed])
    assert judge.reference.lockstep is not None
    assert torch.equal(judge.right_answer(case, seed, [seed, seed]), first * 2)
    assert judge.judge(case, seed, first * 2, calls=[seed, seed]) is None
    assert judge.judge(case, seed, first, calls=[seed, seed]) is not None
    with pytest.raises(RuntimeError, match="without the candidate's calls"):
        judge.right_answer(case, seed, None)


def test_the_run_tolerance_comes_from_the_profile_unless_set(tmp_path):
    case = problem_case(tmp_path)
    default = Settings(problems_dir=tmp_path, candidate_dirs=())
    assert answers.tolerances(default, {}, case) == precision.run_tolerance(
        default.tolerance, default.precision)
    at_fp16 = Settings(problems_dir=tmp_path, candidate_dirs=(), precision="fp16")
    assert answers.tolerances(at_fp16, {}, case) == precision.run_tolerance(
        at_fp16.tolerance, "fp16")
    own = Settings(problems_dir=tmp_path, candidate_dirs=(), atol=0.5, rtol=0.25)
    assert answers.tolerances(own, {}, case) == (0.5, 0.25)


def test_a_manifest_tolerance_replaces_the_run_one_for_its_problem_alone(tmp_path):
    case = problem_case(tmp_path)
    settings = Settings(problems_dir=tmp_path, candidate_dirs=())
    run = answers.tolerances(settings, {}, case)
    documented = {(1, 1): Entry(atol=1.0)}
    assert answers.tolerances(settings, documented, case) == precision.problem_tolerance(
        run, 1.0, None)
    assert answers.tolerances(settings, {(1, 2): Entry(atol=1.0)}, case) == run
    assert checks(tmp_path, documented).tolerances(case) != run


def test_a_pass_read_against_float64_is_flagged_once_with_the_largest_error():
    made = new_record(1, 1, "Scale", "set", "s0", None)
    answers.note_float64_reading(made, "fp16", 0.25)
    answers.note_float64_reading(made, "fp16", 0.5)
    answers.note_float64_reading(made, "fp16", 0.125)
    [flag] = made["flags"]
    assert flag.startswith(answers.FLOAT64_READING) and flag.endswith("0.5)")
