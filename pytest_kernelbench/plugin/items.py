"""The test functions behind every item; the plugin parametrizes them with cases.

Not collected on its own (its name does not match test files): plugin.py builds one module node
per problem from this file, so items read `level1/19_ReLU::test_correct[r1-s0]`.
"""

from __future__ import annotations

import pytest

from pytest_kernelbench.judge.outcome import Outcome
from pytest_kernelbench.suite.integrity import ProblemChanged

STAGES = ("test_compile", "test_correct", "test_speed")


def settle(request: pytest.FixtureRequest, outcome: Outcome) -> None:
    """Hand the outcome to pytest: record it, then pass, skip or fail the item."""
    # A later stage's record holds everything the earlier ones found; under xdist the stages of
    # one case may report out of order, so the stage goes along to decide which record wins.
    stage = STAGES.index(request.node.originalname)
    request.node.user_properties.append(("kernelbench", {"stage": stage, "record": outcome.record}))
    if outcome.details:
        request.node.add_report_section("call", "kernelbench", outcome.details)
    if outcome.skipped:
        pytest.skip(outcome.message)
    if not outcome.passed:
        pytest.fail(f"[{outcome.status}] {outcome.message}", pytrace=False)


def run_stage(stage, case) -> Outcome:
    """One stage; a problem file that changed under the run stops the whole run."""
    try:
        return stage(case)
    except ProblemChanged as exc:
        pytest.exit(str(exc), returncode=pytest.ExitCode.INTERRUPTED)


@pytest.mark.kb_compile
def test_compile(kb_case, kb_evaluator, request):
    settle(request, run_stage(kb_evaluator.compile, kb_case))


@pytest.mark.kb_correct
def test_correct(kb_case, kb_evaluator, request):
    settle(request, run_stage(kb_evaluator.correct, kb_case))


@pytest.mark.kb_speed
def test_speed(kb_case, kb_evaluator, request):
    outcome = run_stage(kb_evaluator.speed, kb_case)
    if outcome.candidate_samples_s:
        record_benchmark(request, kb_case, outcome)
    settle(request, outcome)


def record_benchmark(request: pytest.FixtureRequest, case, outcome: Outcome) -> None:
    """Feed the candidate's measured call times to pytest-benchmark, when it is active.

    The times were measured in the sandbox worker, so they are replayed through a clock that
    advances by one measured sample per call: pytest-benchmark then reports (and saves and
    compares) exactly those samples, not the cost of asking the worker.
    """
    try:
        benchmark = request.getfixturevalue("benchmark")
    except pytest.FixtureLookupError:  # pytest-benchmark is not loaded
        return
    if benchmark.disabled:
        return
    samples = iter(outcome.candidate_samples_s)
    clock = [0.0]

    def replay_one_call():
        clock[0] += next(samples)

    benchmark._timer = lambda: clock[0]  # no public hook takes externally measured samples
    benchmark.group = case.problem.key
    for key in ("speedup", "baseline_time", "candidate_time"):
        benchmark.extra_info[key] = outcome.record.get(key)
    benchmark.pedantic(replay_one_call, rounds=len(outcome.candidate_samples_s), iterations=1)
