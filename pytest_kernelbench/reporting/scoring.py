"""fast_p, geometric-mean speedup and the per-set summary rows. Pure functions over records.

A record is one (problem, candidate set, sample), a record.Record.
With several samples per problem, a problem counts as compiled/correct/fast when its best
sample is: fast_p over k samples is KernelBench's fast_p with the best of k attempts.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from pytest_kernelbench.judge import fast, upstream
from pytest_kernelbench.record import Record


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
    # With several samples per problem: k -> pass@k, and k -> fast_p@k at the run's p
    # (unbiased estimates over each problem's samples), for the k every problem has.
    pass_at_k: dict[int, float] = field(default_factory=dict)
    fast_at_k: dict[int, float] = field(default_factory=dict)
    # p -> problems that do not count in fast_p though a correct, timed sample reads a speedup
    # above p: its timing did not show it (unshown), which the table says rather than hides.
    unshown: dict[float, int] = field(default_factory=dict)


KS = (1, 5, 10, 100)


def pass_at_k(n: int, c: int, k: int) -> float:
    """The chance that at least one of k samples drawn from n, of which c succeed, succeeds:
    1 - C(n - c, k) / C(n, k), the unbiased estimator of Chen et al. (2021)."""
    if k > n:
        raise ValueError(f"k = {k} exceeds the {n} samples")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def at_k(records: Iterable[Record], k: int, succeeded: Callable[[Record], object]) -> float:
    """Mean over problems of pass@k for success = succeeded(record); a problem with no
    candidate counts as k failed samples."""
    by_problem = _by_problem(records)
    if not by_problem:
        return 0.0
    total = 0.0
    for samples in by_problem.values():
        tried = [r for r in samples if r.get("status") != "missing"]
        if tried:
            total += pass_at_k(len(tried), sum(bool(succeeded(r)) for r in tried), k)
    return total / len(by_problem)


def shared_ks(records: Iterable[Record]) -> list[int]:
    """The k of KS that every problem with samples has, when some problem has several."""
    counts = [sum(r.get("status") != "missing" for r in samples)
              for samples in _by_problem(records).values()]
    counts = [n for n in counts if n]
    if not counts or max(counts) < 2:
        return []
    return [k for k in KS if k <= min(counts)]


# Whether a record counts as fast at p: fast.is_fast (this harness's rules, what the judge
# wrote) or fast.is_upstream_fast (upstream's).
Counts = Callable[[Record, float], bool]


def fast_p(records: Iterable[Record], p: float, problems: int | None = None,
           counts: Counts = fast.is_fast) -> float:
    """|problems with a sample that counts as fast at p| / |problems|."""
    by_problem = _by_problem(records)
    total = len(by_problem) if problems is None else problems
    if total == 0:
        return 0.0
    hits = sum(any(counts(r, p) for r in samples) for samples in by_problem.values())
    return hits / total


def reads_above(record: Record, p: float) -> bool:
    """Whether a correct case, timed to a verdict that is no failure, reads a speedup above p,
    shown or not."""
    speedup = record.get("speedup")
    return bool(record.get("correct")) and record.get("status") in fast.TIMED_STATUSES \
        and speedup is not None and speedup > p


def unshown(records: Iterable[Record], p: float, counts: Counts = fast.is_fast) -> int:
    """Problems with no sample that counts as fast at p, but one that reads a speedup above
    p: fast.fast_by_rule held it down, as its timing did not show the speedup above p (no
    interval and too small a lead, or an interval that holds p)."""
    return sum(not any(counts(r, p) for r in samples) and any(reads_above(r, p) for r in samples)
               for samples in _by_problem(records).values())


def geomean(values: Iterable[float | None]) -> float | None:
    logs = [math.log(v) for v in values if v is not None and v > 0 and math.isfinite(v)]
    return math.exp(sum(logs) / len(logs)) if logs else None


def best_speedup(samples: list[Record]) -> float | None:
    speeds = [speedup for r in samples
              if r.get("correct") and (speedup := r.get("speedup")) is not None]
    return max(speeds) if speeds else None


def summarize(records: Iterable[Record], ps: Iterable[float], p: float | None = None,
              counts: Counts = fast.is_fast) -> list[SetSummary]:
    """One row per (candidate set, level), in first-seen set order then level order. A problem
    that could not be evaluated (status problem_error) is no task: it is left out. counts says
    which case is fast at p: by default, as the judge decided under this harness's rules."""
    groups: dict[tuple[str, int], list[Record]] = defaultdict(list)
    for record in records:
        if record.get("status") != "problem_error":
            groups[(record["candidate_set"], record["level"])].append(record)
    set_order = list(dict.fromkeys(key[0] for key in groups))
    ps = list(ps)
    threshold = max(ps) if p is None else p
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
            fast={x: fast_p(members, x, counts=counts) for x in ps},
            geomean_speedup=geomean(best_speedup(s) for s in by_problem.values()),
            pass_at_k={k: at_k(members, k, lambda r: r.get("correct"))
                       for k in shared_ks(members)},
            fast_at_k={k: at_k(members, k, lambda r: counts(r, threshold))
                       for k in shared_ks(members)},
            unshown={x: unshown(members, x, counts) for x in ps},
        ))
    return rows


def summarize_upstream(records: Iterable[Record], ps: Iterable[float],
                       p: float | None = None) -> list[SetSummary]:
    """The same rows under upstream KernelBench's rules: compiled, correct and speedup as its
    verdict has them (upstream.as_upstream_record), fast as the judge decided under its rules."""
    return summarize([upstream.as_upstream_record(r) for r in records], ps, p,
                     counts=fast.is_upstream_fast)


def _by_problem(records: Iterable[Record]) -> dict[tuple[str, int, int], list[Record]]:
    grouped: dict[tuple[str, int, int], list[Record]] = defaultdict(list)
    for record in records:
        grouped[(record["candidate_set"], record["level"], record["problem_id"])].append(record)
    return grouped
