"""Whether a case counts as fast at p, under this harness's rules and under upstream's. Pure.

The judge applies these rules once, when a case's speed item settles, and writes the answers
into the record at each p the run's summary shows (`fast`, and the `upstream` verdict's
`fast`); the speed item's own verdict at the run's p is the same rule. Everything downstream
(the summary tables, the report, `kernelbench-report`, feedback, resume) reads what was
written, through is_fast and is_upstream_fast. Only where nothing was written (a record of a
report made before the field, or a p the run did not judge: `kernelbench-report summary --p X`)
do they apply the same rule to the record's stored fields: never a second rule.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pytest_kernelbench import faults
from pytest_kernelbench.gpu import timing
from pytest_kernelbench.record import Record

# The statuses of a correct case the speed item timed to a verdict that is no failure; a
# torch_only candidate (--kb-require-kernel) and a cheat caught in a timed call are not among
# them.
TIMED_STATUSES = (faults.PASSED, faults.SLOWER, faults.INCONCLUSIVE)


def p_key(p: float) -> str:
    """The key of p in a record's `fast` map: '0', '1', '1.5'."""
    return f"{p:g}"


def fast_by_rule(record: Record, p: float) -> bool:
    """This harness's rule, from a record's stored fields: correct, timed to a verdict that is
    no failure, and a timing that shows the speedup above p (timing.above: its interval above
    p, or without one the speedup above p by more than its `speedup_margin`); at p=0, timed at
    all, since no timing can show a speedup at or below 0. Records made before
    `speedup_margin` count by the speedup alone, as they did.

    The speed item applies it at the run's p (attribute_stage.speed_verdict); readers apply it
    only where the record holds no answer for p (see the module docstring)."""
    speedup = record.get("speedup")
    if not record.get("correct") or record.get("status") not in TIMED_STATUSES:
        return False
    if p <= 0 and record.get("candidate_time") is not None:
        return True  # any time at all, even one the harness's clock could not settle, is above 0
    if speedup is None:
        return False
    margin = record.get("speedup_margin")
    if margin is None:
        return speedup > p
    return timing.above(speedup, record.get("speedup_interval"), p, margin)


def upstream_fast_by_rule(verdict: Mapping[str, Any] | None, p: float) -> bool:
    """Upstream KernelBench's rule, from its verdict (record `upstream`): correct under its
    rules and its speedup (mean of times over mean of times) above p. Applied as
    fast_by_rule is (see the module docstring)."""
    if not verdict or verdict.get("correct") is not True:
        return False
    speedup = verdict.get("speedup")
    return speedup is not None and speedup > p


def fast_map(record: Record, ps: Iterable[float]) -> dict[str, bool]:
    """The record's `fast`: the rule's answer at each p."""
    return {p_key(p): fast_by_rule(record, p) for p in ps}


def upstream_fast_map(verdict: Mapping[str, Any], ps: Iterable[float]) -> dict[str, bool]:
    """The upstream verdict's `fast`: upstream's rule's answer at each p."""
    return {p_key(p): upstream_fast_by_rule(verdict, p) for p in ps}


def is_fast(record: Record, p: float) -> bool:
    """Whether the case counts as fast at p, as the judge wrote it; by the rule where it did
    not (a p it did not judge, a report made before `fast`)."""
    written = (record.get("fast") or {}).get(p_key(p))
    return written if written is not None else fast_by_rule(record, p)


def is_upstream_fast(record: Record, p: float) -> bool:
    """Whether the case counts as fast at p under upstream's rules, as the judge wrote it in
    the `upstream` verdict; by upstream's rule where it did not."""
    verdict: Mapping[str, Any] = record.get("upstream") or {}
    written = (verdict.get("fast") or {}).get(p_key(p))
    return written if written is not None else upstream_fast_by_rule(verdict, p)
