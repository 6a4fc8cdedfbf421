"""The audit: its trivial answers, and its cheap CPU form over the shipped suite."""

from __future__ import annotations

import os
import re
from pathlib import Path

import torch

from pytest_kernelbench.suite import audit
from pytest_kernelbench.suite.correctness import compare

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = Path(__file__).parent / "examples"


def test_trivial_answers_take_their_statistics_from_another_draw():
    expected = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    typical = torch.tensor([[10.0, 10.0], [10.0, 10.0]])
    answers = audit.trivial_answers(expected, typical, [expected.clone()])
    assert torch.equal(answers["zeros"], torch.zeros(2, 2))
    assert torch.equal(answers["constant (another draw's mean)"], torch.full((2, 2), 10.0))
    assert torch.equal(answers["input itself"], expected)
    assert set(answers) == {"zeros", "constant (another draw's mean)",
                            "noise (another draw's mean and std)", "input itself"}


def test_a_scalar_loss_is_not_passed_by_its_own_value():
    loss = torch.tensor(0.1667)
    other = torch.tensor(0.9)
    answers = audit.trivial_answers(loss, other, [])
    assert not compare(loss, answers["constant (another draw's mean)"], 1e-2, 1e-2).passed


def row(out: str, problem: str, check: str) -> str:
    match = re.search(rf"\| {re.escape(problem)}\s*\| {re.escape(check)}\s*\| (\w+)", out)
    assert match, (problem, check)
    return match.group(1)


def test_the_audit_runs_every_check_on_the_example_problems(capsys):
    code = audit.main(["--problems", str(EXAMPLES / "problems"), "--all"])
    out = capsys.readouterr().out
    # WideSoftmax's outputs are ~1e-4: zeros pass elementwise; the whole-tensor check stops them.
    assert row(out, "level1/3_WideSoftmax", "trivial: zeros") == "ok"
    for check in ("deterministic", "input-dependent", "conditioned", "timeable"):
        assert row(out, "level1/2_ReLU", check) == "ok"
    assert "4 problems audited on cpu" in out
    assert code == 0, out


def test_the_starter_problems_pass_the_full_audit_on_cpu(capsys):
    # Level 1's starters by default (seconds); KB_FULL_AUDIT=1 audits all twelve (minutes).
    levels = "1,2,3" if os.environ.get("KB_FULL_AUDIT") else "1"
    code = audit.main(["--problems", str(ROOT / "problems"), "--tags", "starter",
                       "--level", levels])
    out = capsys.readouterr().out
    expected = 12 if levels == "1,2,3" else 3
    assert f"{expected} problems audited on cpu" in out
    assert code == 0, out


def test_every_shipped_problem_fits_by_the_meta_device_estimate(capsys):
    # The LSTM and GRU problems are left out: on the meta device their layers unroll step by
    # step (about 6 s each); test_problem_suite runs each of them on the CPU at full size.
    code = audit.main(["--problems", str(ROOT / "problems"), "--max-bytes", "0",
                       "--skip-tags", "lstm,gru"])
    out = capsys.readouterr().out
    manifest = (ROOT / "problems" / "manifest.yaml").read_text()
    kept = 250 - len(re.findall(r"tags: \[.*\b(lstm|gru)\b", manifest))
    assert kept == 242
    assert f"{kept} problems audited on cpu, {kept} checks, 0 findings" in out, out
    assert code == 0
