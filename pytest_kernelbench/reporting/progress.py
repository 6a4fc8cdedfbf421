"""Which cases a run covers, and which of them it ran to the end. Nothing here knows pytest.

Every case a run selects counts in its summary, whether it ran or not: a problem a set has no
candidate for is `missing`, a case the run stopped before is `not_run`, and both count as not
correct against all selected problems. A missing case gets no items (there is nothing to
run); its record is made here, in the process that writes the report.

A run is complete when every selected item reported. One that stopped part-way (Ctrl-C, a
time limit's SIGINT, `-x`) says how many cases did not run to the end and the command that
finishes it: the same command with `--kb-resume` naming its report, which reuses every case
that settled (resume.py) and runs the rest.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from pytest_kernelbench import faults
from pytest_kernelbench.judge.outcome import base_record
from pytest_kernelbench.record import CaseKey, Record, set_status
from pytest_kernelbench.suite.discovery import Case

STAGES = ("test_compile", "test_correct", "test_speed")  # suite.STAGES, without importing it


def case_key(case: Case) -> CaseKey:
    """The key of a case's record: (set, level, problem id, sample)."""
    return (case.set_name, case.problem.level, case.problem.problem_id, case.sample)


def item_id(case: Case, stage: str) -> str:
    """The node id of one of a case's items: 'level1/19_ReLU::test_speed[r1-s0]'."""
    return f"{case.problem.key}::{stage}[{case.id}]"


class Progress:
    """The cases of a run and, for each, the node ids of its selected items not yet reported."""

    def __init__(self, cases: Iterable[Case], nodeids: Iterable[str] | None = None):
        """cases: those this process may run (its shard, less the resumed ones); nodeids: the
        items pytest selected among theirs, or None for all of them. Where -k, -m or
        --deselect left some out, the run covers the problems and sets with a selected item:
        a missing case counts when both its problem and its set do."""
        cases = list(cases)
        items = {item_id(case, stage): case for case in cases if case.candidate is not None
                 for stage in STAGES}
        chosen = set(items) if nodeids is None else {n for n in nodeids if n in items}
        if len(chosen) < len(items):
            problems = {items[n].problem for n in chosen}
            sets = {items[n].set_name for n in chosen}
            with_items = {items[n] for n in chosen}
            cases = [case for case in cases if case in with_items or (
                case.candidate is None and case.problem in problems and case.set_name in sets)]
        self.cases = cases
        self.item_case = {n: case_key(items[n]) for n in chosen}
        self.left: dict[CaseKey, set[str]] = {case_key(case): set() for case in cases}
        for nodeid in chosen:
            self.left[self.item_case[nodeid]].add(nodeid)

    def reported(self, nodeid: str) -> None:
        """An item finished: passed, failed or skipped."""
        key = self.item_case.get(nodeid)
        if key is not None:
            self.left[key].discard(nodeid)

    def unfinished(self) -> list[CaseKey]:
        """The keys of the cases with a selected item that never reported."""
        return [key for key, left in self.left.items() if left]

    @property
    def missing(self) -> list[Case]:
        return [case for case in self.cases if case.candidate is None]


def item_finished(when: str, passed: bool) -> bool:
    """Whether a test report with this phase and outcome ends its item: the call, or a setup
    that did not pass (a skip, an error). xdist reports a crashed worker's item with `???`."""
    return when == "call" or (when != "teardown" and not passed)


def missing_record(case: Case) -> Record:
    """The record of a problem the set has no candidate for."""
    record = base_record(case)
    set_status(record, faults.MISSING, "no candidate in this set")
    return record


def not_run_record(case: Case) -> Record:
    """The record of a selected case the run stopped before."""
    record = base_record(case)
    set_status(record, faults.NOT_RUN, "the run stopped before this case ran")
    return record


def resume_command(args: Sequence[str], report_path: Path, invocation_dir: Path,
                   module: bool = False) -> str:
    """The command that finishes a partial run: its own arguments, with --kb-resume naming its
    report (in place of any --kb-resume it had). module: it was run as `python -m pytest`."""
    kept: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg == "--kb-resume":
            skip = True  # its value is the next argument
        elif not arg.startswith("--kb-resume="):
            kept.append(arg)
    path = Path(os.path.relpath(report_path, invocation_dir)) \
        if report_path.is_relative_to(invocation_dir) else report_path
    # the interpreter this run used, by name (python3 where no `python` is installed)
    program = [Path(sys.executable).name or "python", "-m", "pytest"] if module else ["pytest"]
    return shlex.join([*program, *kept, f"--kb-resume={path}"])
