"""The order in which cases reach xdist workers: the most expensive first, those that build last.

xdist hands a free worker the next case in collection order, so a long case picked up last
keeps one GPU busy while the others idle. Sorting cases longest first (the classic LPT rule)
leaves only short cases for the end. What a case costs is read from an earlier JSON report
(how long its stages held the device); a case the report does not know costs what other
samples of its problem, else what the suite ships for its problem (SUITE_COSTS, beside the
problems), else its level's known cases, cost at the median; with none of these, deeper levels
go first. With or without xdist, cases whose candidate builds an extension
come after the rest (builds_last), unless the report measured them: those keep their place.
Under xdist, a case whose build is over takes its place by cost again (next_ready), as the
batch API hands out the attempts that are ready.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

import yaml

from pytest_kernelbench.record import from_json
from pytest_kernelbench.reporting.resume import record_key
from pytest_kernelbench.suite.discovery import Case

# Without any measurement: a rough cost per level in seconds (architectures outweigh operators).
LEVEL_GUESS_S = {1: 2.0, 2: 3.0, 3: 8.0}


class CostsError(Exception):
    """A costs report that cannot be read; the message names the file."""


# Beside a suite's problems: what a case of each problem cost on each kind of device, measured
# by a run of the suite's reference set (benchmarks/suite_costs.py). A first run has no report
# of its own to order and pace by; without these its estimate was the level guesses above.
SUITE_COSTS = "costs.yaml"
SUITE_SET = "(suite)"  # the set name its figures take in a run's costs: no case has it
_PROBLEM_KEY = re.compile(r"level(\d+)/(\d+)_")


def suite_costs(problems_dir: Path, device: str) -> dict[tuple[int, int], float]:
    """Seconds per (level, problem id) that the suite's costs file gives this kind of device
    (cpu, cuda); {} for a suite without one."""
    path = problems_dir / SUITE_COSTS
    if not path.is_file():
        return {}
    try:
        table = (yaml.safe_load(path.read_text()) or {}).get(device.split(":")[0]) or {}
        costs = {}
        for key, seconds in table.items():
            found = _PROBLEM_KEY.match(key)
            if found is None:
                raise ValueError(f"{key!r} is not a problem's key (level<N>/<id>_<Name>)")
            costs[int(found[1]), int(found[2])] = float(seconds)
        return costs
    except (OSError, ValueError, TypeError, AttributeError, yaml.YAMLError) as exc:
        raise CostsError(f"{path}: not a table of seconds per problem ({exc})") from None


def with_suite_costs(costs: dict[tuple, float],
                     suite: dict[tuple[int, int], float]) -> dict[tuple, float]:
    """A run's measured costs, and for each problem they do not know, the suite's figure (under
    SUITE_SET, so that it stands for the problem and its level but never for a case)."""
    known = {(level, pid) for (_, level, pid, _) in costs}
    return {**costs, **{(SUITE_SET, level, pid, ""): seconds
                        for (level, pid), seconds in suite.items() if (level, pid) not in known}}


def read_costs(path: Path) -> dict[tuple, float]:
    """Seconds per (set, level, problem id, sample), from the `held` windows of each record."""
    try:
        records = [from_json(obj) for obj in json.loads(path.read_text())["results"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CostsError(f"{path}: not a kernelbench JSON report ({exc})") from None
    costs = {}
    for record in records:
        windows = [w for w in (record.get("held") or {}).values() if len(w) == 2]
        if windows:
            costs[record_key(record)] = max(w[1] for w in windows) - min(w[0] for w in windows)
    return costs


def expected_cost(case: Case, costs: dict[tuple, float]) -> float:
    """What a case is expected to cost, in seconds (see the module docstring)."""
    if case.candidate is None:
        return 0.0  # reported missing at once
    level, pid = case.problem.level, case.problem.problem_id
    known = costs.get(cost_key(case))
    if known is not None:
        return known
    same_problem = [s for (_, lv, p, _), s in costs.items() if (lv, p) == (level, pid)]
    if same_problem:
        return statistics.median(same_problem)
    same_level = [s for (_, lv, _, _), s in costs.items() if lv == level]
    if same_level:
        return statistics.median(same_level)
    return LEVEL_GUESS_S.get(level, max(LEVEL_GUESS_S.values()))


def longest_first(cases: Sequence[Case], costs: dict[tuple, float]) -> list[Case]:
    """Cases by expected cost, highest first; ties keep their order (stable sort)."""
    return sorted(cases, key=lambda case: -expected_cost(case, costs))


def cost_key(case: Case) -> tuple:
    """A case's key in the costs (read_costs): set, level, problem id, sample."""
    return case.set_name, case.problem.level, case.problem.problem_id, case.sample


def measured(case: Case, costs: dict[tuple, float]) -> bool:
    """Whether the costs report timed this very case (not a guess from its problem or level)."""
    return cost_key(case) in costs


def builds_last(cases: Sequence[Case], builds: Callable[[Case], bool],
                costs: dict[tuple, float] | None = None) -> list[Case]:
    """The cases whose candidate builds an extension after the others, each group in its own
    order. The build pool works through the builds from the run's start either way; this way
    they run while the other cases' items do, where the first items would wait for theirs (at
    `-n 8` on CUDA-L1's candidates, 23 s a case at the median, the device idle meanwhile).

    A case the costs report measured keeps its place: its build is most likely cached by now,
    and one that builds inside its item in every run (its cost says so: 65-70 s for two of
    CUDA-L1's) must start early, not at the end while the other workers run out of cases."""
    building = [builds(case) and not measured(case, costs or {}) for case in cases]
    return [case for case, b in zip(cases, building) if not b] + \
        [case for case, b in zip(cases, building) if b]


def shard_of(cases: Sequence[Case], costs: dict[tuple, float], count: int) -> dict[Case, int]:
    """Each case's shard (1..count): the longest first, each to the shard with the least expected
    work so far (ties to the lowest shard). Every shard computes the same split from the same
    cases and costs, so shards run on separate machines cover each case exactly once."""
    load = [0.0] * count
    assigned: dict[Case, int] = {}
    # Ties are broken by the case itself, not by the order it came in.
    ordered = sorted(cases, key=lambda c: (-expected_cost(c, costs), c.problem.level,
                                           c.problem.problem_id, c.set_name, c.sample))
    for case in ordered:
        shard = min(range(count), key=lambda s: (load[s], s))
        # A case with no candidate costs nothing; spread such cases by count instead.
        load[shard] += expected_cost(case, costs) or 1e-6
        assigned[case] = shard + 1
    return assigned


# xdist's workers make the run's builds (each its share of one pool), while the process that
# hands the cases out builds nothing: a worker says that a build is over with a file named for
# its candidate, in a folder the run's processes share.
SETTLED = frozenset({"built", "cached", "failed", "deferred"})  # a build's statuses once over


def settled_mark(folder: Path, candidate: Path) -> Path:
    return folder / hashlib.sha256(str(candidate.resolve()).encode()).hexdigest()[:24]


def mark_settled(folder: Path, candidate: Path, status: str) -> None:
    """Say that the build of candidate is over, where it is (`status`, a build's). Only the
    order of the cases hears of it: a mark that cannot be written is left out."""
    if status in SETTLED:
        with contextlib.suppress(OSError):
            settled_mark(folder, candidate).touch()


def next_ready(queued: Iterable[str], rank: Mapping[str, int], waiting: Mapping[str, Path],
               folder: Path) -> str | None:
    """Of the queued cases (xdist scopes), the one to hand out next: the first by `rank` (the
    longest first) among those that wait for no build (`waiting`: those that do, with their
    candidate) or whose build is over; None where each waits for a build not yet over.

    builds_last queues every case that builds behind those that do not, so that no item waits
    for its build; a build that is over needs no such place, and its case run at the end keeps
    one worker busy while the others run out of cases (CUDA-L1's L1/26 was built 207 s into a
    349-s run; its 50-s item began at 280 s and ended the run)."""
    ready = [scope for scope in queued
             if scope not in waiting or settled_mark(folder, waiting[scope]).exists()]
    return min(ready, key=lambda scope: rank.get(scope, len(rank)), default=None)
