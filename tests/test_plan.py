"""What a run covers, decided before it runs (engine/plan.py): a bad option or file is a
PlanError naming it, and the cases this process runs leave out resumed ones and other shards'."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_kernelbench.engine.plan import PlanError, RunPlan
from pytest_kernelbench.reporting.progress import case_key
from pytest_kernelbench.settings import Settings

EXAMPLES = Path(__file__).parent / "examples"
PROBLEMS = EXAMPLES / "problems"
GOOD = EXAMPLES / "candidates" / "good"


def plan_for(costs_named: bool = False, **fields) -> RunPlan:
    fields.setdefault("candidate_dirs", (GOOD,))
    return RunPlan.make(Settings(PROBLEMS, device="cpu", report_path=None, **fields), None,
                        costs_named)


def test_tags_without_a_manifest_name_the_problems_folder():
    with pytest.raises(PlanError, match=f"--kb-tags: {PROBLEMS} has no manifest.yaml"):
        plan_for(tags=("conv",))


def test_a_level_with_no_problems_is_said_with_the_levels_asked_for():
    with pytest.raises(PlanError, match=r"no problems selected .*\(levels 3\)"):
        plan_for(levels=(3,))


def test_shards_cover_every_case_once_and_this_process_runs_its_own():
    plans = [plan_for(shard=(index, 3)) for index in (1, 2, 3)]
    mine = [{case_key(c) for c in plan.cases if plan.wanted(c)} for plan in plans]
    everything = {case_key(c) for c in plans[0].cases}
    assert set().union(*mine) == everything
    assert sum(len(m) for m in mine) == len(everything)


def test_a_resumed_case_is_not_run_again():
    plan = plan_for()
    case = plan.cases[0]
    plan.resumed = {case_key(case): {}}  # type: ignore[dict-item]
    assert not plan.wanted(case)
    assert all(plan.wanted(c) for c in plan.cases[1:])
