"""What a stage concludes (Outcome), and the records of cases that never reached a candidate."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from pytest_kernelbench import faults
from pytest_kernelbench.judge import fast
from pytest_kernelbench.record import Record, copy_of, new_record, set_verdict
from pytest_kernelbench.suite.discovery import Case


@dataclass
class Outcome:
    """What one stage concluded. `skipped` marks a stage that could not run, not a failure."""

    status: str
    message: str = ""
    details: str = ""
    skipped: bool = False
    record: Record = field(default_factory=lambda: Record())
    candidate_samples_s: list[float] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.status == faults.PASSED and not self.skipped


SKIPPED = "skipped"  # an item's verdict when an earlier one did not pass, or there is no candidate


def item_verdict(outcome: Outcome) -> str:
    """What an item settles with, in a word: `passed`, the status it fails with, `inconclusive`
    where it is skipped as such (a speed item whose timing cannot tell the speedup from p), or
    `skipped`."""
    if outcome.skipped:
        return faults.INCONCLUSIVE if outcome.status == faults.INCONCLUSIVE else SKIPPED
    return outcome.status


def settled(outcome: Outcome, item: str, ps: Iterable[float] = ()) -> Outcome:
    """The outcome an item (compile, correct, speed) settles with, its record saying so in
    `verdicts`. The speed item's also says whether the case counts as fast at each of ps, under
    this harness's rules (`fast`) and under upstream's (the `upstream` verdict's `fast`): the
    one decision every table and report reads."""
    record = copy_of(outcome.record)
    set_verdict(record, item, item_verdict(outcome))
    if item == "speed":
        ps = list(ps)
        record["fast"] = fast.fast_map(record, ps)
        verdict = record.get("upstream")
        if verdict:
            record["upstream"] = {**verdict, "fast": fast.upstream_fast_map(verdict, ps)}
    return replace(outcome, record=record)


class ProblemError(Exception):
    """The problem itself failed (its inputs, its weights, its reference): its fault, not the
    candidate's. out_of_memory: it ran out of device memory, which may be others' doing."""

    def __init__(self, message: str, out_of_memory: bool = False):
        super().__init__(message)
        self.out_of_memory = out_of_memory


def problem_failed(what: str, exc: BaseException) -> ProblemError:
    """The problem's failure at `what`, raised as exc; out of memory where that is why."""
    return ProblemError(f"{what}: {faults.describe_exception(exc)}",
                        faults.classify_exception(exc, "forward") == faults.OUT_OF_MEMORY)


def base_record(case: Case) -> Record:
    """A new record (record.Record, report.schema.json) for a case."""
    return new_record(case.problem.level, case.problem.problem_id, case.problem.name,
                      case.set_name, case.sample,
                      str(case.candidate.path) if case.candidate else None)


def failed(record: Record, status: str, message: str, details: str = "") -> Outcome:
    """The stage's failing Outcome, its record saying so."""
    record.update({"status": status, "error": message})
    return Outcome(status, message, details, record=record)


def problem_outcome(case: Case, defect: str) -> Outcome:
    """The outcome of a stage of a case whose problem cannot be evaluated."""
    message = f"{case.problem.path}: {defect}"
    record = base_record(case)
    record.update({"status": faults.PROBLEM_ERROR, "error": message})
    return Outcome(faults.PROBLEM_ERROR, f"the problem, not the candidate: {message}",
                   record=record)


def skipped_after(earlier: Outcome, stage: str) -> Outcome:
    reason = earlier.message if earlier.skipped else f"{stage} failed ({earlier.status})"
    return Outcome(earlier.status, reason, skipped=True, record=copy_of(earlier.record))


def makes_streams(record: Record) -> bool:
    """Whether the candidate's source makes CUDA streams of its own (its static scan says so)."""
    return any("creates CUDA streams" in note for note in record.get("static_scan") or [])


def stream_hint(record: Record) -> str:
    """What a cheat verdict most likely means for a candidate that makes CUDA streams."""
    if makes_streams(record):
        return ("; the candidate makes CUDA streams: work on a stream not ordered after the "
                "caller's can read inputs before they are written and return outputs before "
                "they are computed, and events on the caller's stream do not time it")
    return ""


def graph_hint(record: Record) -> str:
    """What a CUDA fault after a first good trial most likely means for a candidate that
    captures CUDA graphs."""
    if any("captures CUDA graphs" in note for note in record.get("static_scan") or []):
        return ("; the candidate captures CUDA graphs: a replay reads and writes the addresses "
                "of the tensors it was captured with, and an earlier trial's inputs are freed "
                "memory by now")
    return ""


def cheat(record: Record, message: str) -> Outcome:
    """The cheat verdict: no speedup stands."""
    message += stream_hint(record)
    record.update({"status": faults.CHEAT, "error": message, "speedup": None})
    return Outcome(faults.CHEAT, message, record=record)
