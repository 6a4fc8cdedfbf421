from __future__ import annotations

import pytest
import torch

from pytest_kernelbench.suite import correctness
from pytest_kernelbench.suite.correctness import compare


def check(expected, got, atol=1e-2, rtol=1e-2):
    return compare(expected, got, atol, rtol)


def test_equal_outputs_pass():
    x = torch.randn(4, 5)
    assert check(x, x.clone()).passed


def test_a_mismatch_names_the_worst_element_and_the_error_sizes():
    expected = torch.zeros(3, 4)
    got = expected.clone()
    got[1, 2] = 5.0
    got[2, 3] = 0.5
    verdict = check(expected, got)
    assert verdict.status == "mismatch"
    assert "2 of 12 elements" in verdict.message
    assert "worst at (1, 2): expected 0, got 5" in verdict.message
    assert "max abs error 5" in verdict.message


@pytest.mark.parametrize(("got", "status", "text"), [
    (torch.zeros(3, 5), "shape_mismatch", "shape (3, 5), expected (3, 4)"),
    (torch.zeros(3, 4, dtype=torch.float16), "dtype_mismatch", "dtype torch.float16"),
    ([torch.zeros(3, 4)], "structure_mismatch", "expected a tensor, got list"),
])
def test_shape_dtype_and_structure_are_checked_before_values(got, status, text):
    verdict = check(torch.zeros(3, 4), got)
    assert verdict.status == status
    assert text in verdict.message


def test_nan_where_the_reference_is_finite_fails():
    got = torch.ones(2, 2)
    got[0, 1] = float("nan")
    verdict = check(torch.ones(2, 2), got)
    assert verdict.status == "nan_inf"
    assert "first at (0, 1)" in verdict.message


def test_zeros_fail_even_when_outputs_are_small_next_to_atol():
    expected = torch.softmax(torch.rand(4, 8192), dim=1)
    assert float(expected.max()) < 1e-2
    verdict = check(expected, torch.zeros_like(expected))
    assert verdict.status == "mismatch"
    assert "whole-tensor relative error is 1" in verdict.message


def test_tuples_are_compared_item_by_item():
    a, b = torch.ones(2), torch.zeros(2)
    assert check((a, b), (a.clone(), b.clone())).passed
    verdict = check((a, b), (a.clone(),))
    assert verdict.status == "structure_mismatch"


def test_integer_outputs_must_match_exactly():
    verdict = check(torch.tensor([1, 2, 3]), torch.tensor([1, 2, 4]))
    assert verdict.status == "mismatch"
    assert "worst at (2,)" in verdict.message


def test_an_output_of_rounding_noise_is_judged_against_float64():
    # The true answer is zero; fp32 gives noise, and reversed columns give other noise.
    x = torch.rand(64, 4096)
    expected = (x - x.mean(1, keepdim=True)).mean(1)
    honest = (x.flip(1) - x.flip(1).mean(1, keepdim=True)).mean(1)
    precise = (x.double() - x.double().mean(1, keepdim=True)).mean(1)
    verdict = check(expected, honest)
    assert verdict.rule == correctness.WHOLE_TENSOR
    own_error = correctness.within_rounding(expected, honest, precise, 1e-2)
    assert own_error is not None and own_error > 1e-2


def test_zeros_stay_wrong_where_the_float64_reference_agrees_with_fp32():
    x = torch.rand(4, 8192)
    expected = torch.softmax(x, dim=1)
    precise = torch.softmax(x.double(), dim=1)
    assert correctness.within_rounding(expected, torch.zeros_like(expected), precise, 1e-2) is None
    assert correctness.within_rounding(expected, expected * 1.5, precise, 1e-2) is None
    assert correctness.within_rounding(expected, expected, precise, 1e-2) is not None
