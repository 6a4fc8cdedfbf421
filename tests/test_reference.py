"""judge/reference.py: the reference side of a problem, through ReferenceSide's own methods, on
tiny CPU problems written for each test (no worker, no GPU)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import torch

from pytest_kernelbench.judge import reference
from pytest_kernelbench.judge.outcome import ProblemError
from pytest_kernelbench.judge.reference import ReferenceSide, burst_calls, input_dtype
from pytest_kernelbench.settings import Settings
from pytest_kernelbench.suite.discovery import Case, Problem

TOLERANCE = 1e-5

TWICE = """
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = nn.Parameter(torch.randn(4))

        def forward(self, x):
            return x * self.scale
"""


def problem_case(folder: Path, body: str, name: str = "Twice", problem_id: int = 1,
                 inputs: str = "[torch.randn(4)]") -> Case:
    path = folder / f"{problem_id}_{name}.py"
    path.write_text("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
                    + textwrap.dedent(body)
                    + f"\ndef get_inputs():\n    return {inputs}\n"
                    + "\ndef get_init_inputs():\n    return []\n")
    return Case(Problem(1, problem_id, name, path), "set", "s0", None)


def side(tmp_path: Path, **fields) -> ReferenceSide:
    settings = Settings(problems_dir=tmp_path, candidate_dirs=(), **fields)
    return ReferenceSide(settings, "cpu", lambda case: (TOLERANCE, TOLERANCE))


@pytest.mark.parametrize("median_s", [1e-9, 1e-4, 10.0])
def test_a_burst_lasts_about_its_target_within_its_bounds(median_s):
    calls = burst_calls(median_s)
    assert 3 <= calls <= reference.BURST_MAX_CALLS
    if 3 < calls < reference.BURST_MAX_CALLS:
        assert calls * median_s == pytest.approx(reference.BURST_TARGET_S, rel=0.01)


def test_the_input_dtype_is_the_first_floating_inputs_else_float32():
    assert input_dtype([3, torch.ones(2, dtype=torch.long), torch.ones(2).half()]) == "float16"
    assert input_dtype([torch.ones(2, dtype=torch.long)]) == "float32"


def test_each_seed_has_its_own_reference_output_kept_while_the_problem_stays(tmp_path):
    case = problem_case(tmp_path, TWICE)
    ref = side(tmp_path)
    first, second = ref.output(case, 1), ref.output(case, 2)
    assert not torch.equal(first, second)
    assert ref.output(case, 1) is first  # kept, not computed again
    assert torch.equal(first, ref.model()(*ref.inputs(1)))
    assert ref.lockstep is None and not ref.stochastic and not ref.mutates_inputs


def test_a_case_of_another_problem_replaces_the_loaded_one(tmp_path):
    ref = side(tmp_path)
    twice = problem_case(tmp_path, TWICE)
    negate = problem_case(tmp_path, """
        class Model(nn.Module):
            def forward(self, x):
                return -x
    """, name="Negate", problem_id=2)
    ref.output(twice, 1)
    negated = ref.output(negate, 1)
    assert ref.path == negate.problem.path
    assert torch.equal(negated, -ref.inputs(1)[0])


def test_the_reference_is_built_again_with_the_same_weights(tmp_path):
    case = problem_case(tmp_path, TWICE)
    ref = side(tmp_path)
    ref.output(case, 1)
    assert torch.equal(ref.fresh_model().scale, ref.model().scale)


def test_the_float64_output_is_the_same_answer_at_double_precision(tmp_path):
    case = problem_case(tmp_path, TWICE)
    ref = side(tmp_path)
    precise = ref.precise_output(case, 1)
    assert precise.dtype == torch.float64
    torch.testing.assert_close(precise.float(), ref.output(case, 1))


def test_a_reference_that_changes_its_inputs_is_known_to(tmp_path):
    case = problem_case(tmp_path, """
        class Model(nn.Module):
            def forward(self, x):
                return x.add_(1)
    """)
    ref = side(tmp_path)
    ref.output(case, 1)
    assert ref.mutates_inputs


def test_a_reference_that_draws_random_numbers_in_forward_is_stochastic(tmp_path):
    case = problem_case(tmp_path, """
        class Model(nn.Module):
            def forward(self, x):
                return F.dropout(x, 0.5, training=True)
    """, inputs="[torch.randn(256)]")
    ref = side(tmp_path)
    ref.output(case, 1)
    assert ref.stochastic and ref.lockstep is None


def test_a_reference_that_keeps_state_is_judged_in_lockstep(tmp_path):
    case = problem_case(tmp_path, """
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.calls = 0

            def forward(self, x):
                self.calls += 1
                return x + self.calls
    """)
    ref = side(tmp_path)
    first = ref.output(case, 1)
    assert ref.lockstep is not None
    # The twin answers a sequence of calls as a fresh reference called that way does.
    assert torch.equal(ref.lockstep.output_at([1]), first)
    assert torch.equal(ref.lockstep.output_at([1, 1]), first + 1)


def test_a_reference_whose_answers_no_fresh_twin_repeats_cannot_be_judged(tmp_path):
    case = problem_case(tmp_path, """
        CALLS = [0]

        class Model(nn.Module):
            def forward(self, x):
                CALLS[0] += 1  # shared by every instance: no fresh model starts over
                return x + CALLS[0]
    """)
    ref = side(tmp_path)
    with pytest.raises(ProblemError, match="keeps state between calls"):
        ref.output(case, 1)
    with pytest.raises(ProblemError, match="keeps state between calls"):
        ref.output(case, 2)  # said of every later draw too


OVERFLOWING = """
    class Model(nn.Module):
        def forward(self, x):
            return torch.where(x > 0, x * float("inf"), x)
"""


def test_an_fp16_reference_that_overflows_cannot_be_judged_at_that_precision(tmp_path):
    case = problem_case(tmp_path, OVERFLOWING)
    with pytest.raises(ProblemError, match="NaN/Inf.*cannot be judged at this precision"):
        side(tmp_path, precision="fp16").output(case, 1)


def test_at_fp32_the_same_output_is_an_answer_like_any_other(tmp_path):
    case = problem_case(tmp_path, OVERFLOWING)
    assert not torch.isfinite(side(tmp_path).output(case, 1)).all()


def test_a_problem_whose_inputs_fail_is_the_problems_fault(tmp_path):
    case = problem_case(tmp_path, TWICE, inputs="[torch.randn(4) @ torch.randn(5)]")
    with pytest.raises(ProblemError, match="its inputs or reference failed"):
        side(tmp_path).output(case, 1)


def test_a_problem_whose_model_cannot_be_built_is_the_problems_fault(tmp_path):
    case = problem_case(tmp_path, """
        class Model(nn.Module):
            def __init__(self):
                raise ValueError("no weights")
    """)
    with pytest.raises(ProblemError, match="its reference cannot be built.*no weights"):
        side(tmp_path).output(case, 1)


def test_the_traits_of_a_cpu_problem_name_its_cost_and_dtype_and_no_kernels(tmp_path):
    case = problem_case(tmp_path, TWICE)
    traits = side(tmp_path).traits(case, [1, 2, 3])
    assert traits["kernels"] is None and traits["dtype"] == "float32"
    assert traits["cost"] is not None


def test_the_baselines_own_clock_gives_a_positive_time_per_call(tmp_path):
    case = problem_case(tmp_path, TWICE)
    ref = side(tmp_path)
    wall_s = ref.wall_s(case, [1, 2, 3])
    assert 0 < wall_s < reference.BURST_TARGET_S
    assert ref.wall_s(case, [1, 2, 3]) == wall_s  # measured once per problem


def test_a_large_cpu_reference_is_set_aside_and_rebuilt_with_the_same_answers(tmp_path,
                                                                               monkeypatch):
    case = problem_case(tmp_path, TWICE)
    ref = side(tmp_path)
    expected = ref.output(case, 1).clone()
    weights = ref.model().scale.detach().clone()
    monkeypatch.setattr(reference, "KEPT_OUTPUTS_BYTES", 0)  # any model is large now
    ref.set_aside(case, [1, 2])
    assert not ref.holds_model
    assert torch.equal(ref.output(case, 1), expected)  # its timing draws were kept
    assert torch.equal(ref.model().scale, weights) and ref.holds_model


def test_a_small_reference_or_one_on_another_baseline_stays(tmp_path):
    case = problem_case(tmp_path, TWICE)
    small = side(tmp_path)
    small.output(case, 1)
    small.set_aside(case, [1])
    compiled = side(tmp_path, baseline="compile")
    compiled.output(case, 1)
    compiled.set_aside(case, [1])
    assert small.holds_model and compiled.holds_model
