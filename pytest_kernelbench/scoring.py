"""fast_p, geometric-mean speedup and the per-set summary rows. Pure functions over records.

A record is one (problem, candidate set, sample) as a plain dict (see evaluation.base_record).
With several samples per problem, a problem counts as compiled/correct/fast when its best
sample is: fast_p over k samples is KernelBench's fast_p with the best of k attempts.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class SetSummary:
    candidate_set: str
    level: int
    problems: int
    missing: int
    compiled: int
    correct: int
    fast: dict[float, float]  # p -> fast_p as a fraction of all problems
    geomean_speedup: float | None


def is_fast(record: dict, p: float) -> bool:
    """KernelBench's criterion: correct and strictly faster than p times the baseline."""
    speedup = record.get("speedup")
    return bool(record.get("correct")) and speedup is not None and speedup > p


def fast_p(records: Iterable[dict], p: float, problems: int | None = None) -> float:
    """|problems with a correct sample faster than p| / |problems|."""
    by_problem = _by_problem(records)
    total = len(by_problem) if problems is None else problems
    if total == 0:
        return 0.0
    hits = sum(any(is_fast(r, p) for r in samples) for samples in by_problem.values())
    return hits / total


def geomean(values: Iterable[float | None]) -> float | None:
    logs = [math.log(v) for v in values if v is not None and v > 0 and math.isfinite(v)]
    return math.exp(sum(logs) / len(logs)) if logs else None


def best_speedup(samples: list[dict]) -> float | None:
    speeds = [r["speedup"] for r in samples if r.get("correct") and r.get("speedup") is not None]
    return max(speeds) if speeds else None


def summarize(records: Iterable[dict], ps: Iterable[float]) -> list[SetSummary]:
    """One row per (candidate set, level), in first-seen set order then level order. A problem
    that could not be evaluated (status problem_error) is no task: it is left out."""
    groups: dict[tuple[str, int], list[dict]] = defaultdict(list)
    for record in records:
        if record.get("status") != "problem_error":
            groups[(record["candidate_set"], record["level"])].append(record)
    set_order = list(dict.fromkeys(key[0] for key in groups))
    rows = []
    for (set_name, level), members in sorted(groups.items(),
                                             key=lambda kv: (set_order.index(kv[0][0]), kv[0][1])):
        by_problem = _by_problem(members)
        rows.append(SetSummary(
            candidate_set=set_name,
            level=level,
            problems=len(by_problem),
            missing=sum(all(r.get("status") == "missing" for r in s) for s in by_problem.values()),
            compiled=sum(any(r.get("compiled") for r in s) for s in by_problem.values()),
            correct=sum(any(r.get("correct") for r in s) for s in by_problem.values()),
            fast={p: fast_p(members, p) for p in ps},
            geomean_speedup=geomean(best_speedup(s) for s in by_problem.values()),
        ))
    return rows


def _by_problem(records: Iterable[dict]) -> dict[tuple, list[dict]]:
    grouped: dict[tuple, list[dict]] = defaultdict(list)
    for record in records:
        grouped[(record["candidate_set"], record["level"], record["problem_id"])].append(record)
    return grouped
