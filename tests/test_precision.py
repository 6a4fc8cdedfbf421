"""Precision modes and tolerance profiles."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from pytest_kernelbench import precision
from pytest_kernelbench.suite import loading


def test_profiles_follow_upstreams_versions():
    assert precision.run_tolerance("v0", "fp32") == (1e-2, 1e-2)
    assert precision.run_tolerance("main", "fp32") == (1e-4, 1e-4)
    assert precision.run_tolerance("main", "bf16") == (1e-2, 1e-2)
    assert precision.run_tolerance("3e-3,1e-3", "fp16") == (3e-3, 1e-3)


def test_manifest_tolerances_scale_with_the_profile():
    assert precision.problem_tolerance((1e-4, 1e-4), 5e-2, None) == pytest.approx((5e-4, 1e-4))
    assert precision.problem_tolerance((1e-2, 1e-2), None, None) == (1e-2, 1e-2)


@pytest.mark.parametrize("text", ["v1", "1e-3", "a,b", "-1,0", "1,2,3"])
def test_a_bad_profile_says_what_is_allowed(text):
    with pytest.raises(ValueError, match="v0, main or ATOL,RTOL"):
        precision.parse_tolerance_profile(text)


def test_tf32_is_told_apart_only_where_the_policy_keeps_it_off():
    allowed, off = precision.Numerics.of("fp32", "allow"), precision.Numerics.of("fp32", "off")
    try:
        loading.apply(allowed)
        assert not loading.tf32_switched_on(allowed)
        loading.apply(off)
        assert not loading.tf32_switched_on(off)
        torch.backends.cudnn.allow_tf32 = True  # what a candidate may do
        assert loading.tf32_switched_on(off)
        assert not loading.tf32_switched_on(allowed)
    finally:
        loading.apply(precision.EXACT_FP32)


@pytest.mark.parametrize("policy", ["off", "allow"])
def test_applying_the_numerics_sets_both_tf32_switches_to_the_policy(policy):
    try:
        loading.apply(precision.Numerics.of("fp32", policy))
        flags = loading.numerics_flags()
        assert flags["matmul_tf32"] is flags["cudnn_tf32"] is (policy == "allow")
    finally:
        loading.apply(precision.EXACT_FP32)


@pytest.mark.parametrize(("mode", "tf32"), [("fp64", "off"), ("fp32", "on"), ("bf16", "")])
def test_numerics_refuse_a_precision_or_tf32_policy_they_do_not_know(mode, tf32):
    with pytest.raises(ValueError, match="precision must be one of"):
        precision.Numerics.of(mode, tf32)


def test_models_and_inputs_are_cast_to_the_precision():
    class Problem:
        @staticmethod
        def get_inputs():
            return [torch.rand(2, 3), torch.tensor([1, 2])]

    bf16 = precision.Numerics.of("bf16", "off")
    x, index = loading.make_inputs(Problem, 1, "cpu", bf16)
    model = loading.build_model(torch.nn.Linear, [3, 2], 1, "cpu", "train", bf16)
    assert x.dtype == torch.bfloat16 and index.dtype == torch.int64
    assert model.weight.dtype == torch.bfloat16
    (exact,) = loading.cast([torch.rand(2)], precision.EXACT_FP32)
    assert exact.dtype == torch.float32


@pytest.mark.parametrize("mode", ["bf16", "fp16"])
def test_correct_candidates_pass_and_wrong_ones_fail_at_low_precision(kb, mode):
    kb.run("good", "slightly_off", args=(f"--kb-precision={mode}", "--kb-p=0", "--kb-trials=2",
                                         "-k", "Scale or ReLU"))
    records = kb.records()
    assert kb.report()["config"]["precision"] == mode
    for key in [("good", 1, "s0"), ("good", 2, "s0")]:
        assert records[key]["correct"], records[key]["error"]
        assert records[key]["upstream"]["correct"] is True
    kb.run("broken", args=(f"--kb-precision={mode}", "--kb-trials=1", "-k", "wrong_values"))
    assert kb.records()[("broken", 2, "wrong_values")]["status"] == "mismatch"


def test_the_main_profile_holds_fp32_to_1e_4(kb):
    kb.run("slightly_off", args=("--kb-p=0", "--kb-trials=1", "-k", "ReLU"))
    assert kb.records()[("slightly_off", 2, "s0")]["correct"]
    kb.run("slightly_off", args=("--kb-tolerance=main", "--kb-p=0", "--kb-trials=1", "-k", "ReLU"))
    record = kb.records()[("slightly_off", 2, "s0")]
    assert record["status"] == "mismatch" and "atol 0.0001" in record["error"]


def test_the_audit_runs_the_suite_cast(capsys):
    from pathlib import Path

    from pytest_kernelbench.suite import audit

    problems = Path(__file__).parent / "examples" / "problems"
    try:
        code = audit.main(["--problems", str(problems), "--precision", "bf16", "-k", "ReLU"])
    finally:
        loading.apply(precision.EXACT_FP32)
    out = capsys.readouterr().out
    assert code == 0 and "problems audited on cpu" in out, out


@pytest.mark.parametrize("mode", ["bf16", "fp16"])
def test_the_shipped_reference_set_passes_cast_to_low_precision(kb, mode):
    root = Path(__file__).parents[1]
    kb.run(problems=str(root / "problems"), args=(
        "--kb-candidates=builtin:reference", f"--kb-precision={mode}",
        "--kb-p=0", "--kb-trials=2", "--kb-level=3", "-k", "32_Conv or 34_Vanilla"))
    records = kb.records()
    assert {(r["level"], r["problem_id"]) for r in records.values()} == {(3, 32), (3, 34)}
    for key, record in records.items():
        assert record["correct"], (key, record["error"])
