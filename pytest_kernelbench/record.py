"""The result record: one per (problem, candidate set, sample), as the JSON report holds it.

`report.schema.json` (shipped with the package) is the contract and documents every field;
`Record` mirrors it for type checkers, and a test keeps the two in step. A record is made by
`new_record` and filled in stage by stage through the few writers below (a stage's fields in
one `record.update({...})`, `add_flag`, `charge`, `note_started`, `mark_held`, `note_aside`);
every other module only reads it, or writes through `set_status`, `set_verdict` and
`set_fingerprint`. A record read back from JSON (a report, a `.jsonl` stream, an xdist
worker's user_properties) comes in through `from_json`.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any, Literal, TypedDict, cast

SCHEMA_PATH = Path(__file__).with_name("report.schema.json")


# What a record was made from, each part a digest: candidate, problem and settings.
Fingerprint = dict[str, str]


class _UpstreamJudged(TypedDict):
    rules: str
    compiled: bool
    correct: bool | None
    speedup: float | None


class UpstreamVerdict(_UpstreamJudged, total=False):
    fast: dict[str, bool]  # p -> counts as fast under upstream's rules, from the speed item on


class Record(TypedDict, total=False):
    """Fields from `error_details` on are there once a stage got that far (null where it did
    not measure them)."""

    # who
    level: int
    problem_id: int
    problem: str
    candidate_set: str
    sample: str
    candidate_path: str | None
    # the verdict
    compiled: bool
    correct: bool
    speedup: float | None
    baseline_time: float | None
    candidate_time: float | None
    status: str | None  # the verdict of the last item that settled; `verdicts` says which
    verdicts: dict[str, str] | None  # each item's own: compile, correct, speed
    fast: dict[str, bool] | None  # p -> counts as fast (judge/fast.py), from the speed item on
    error: str | None
    error_details: str | None
    flags: list[str] | None
    upstream: UpstreamVerdict | None
    # what the candidate brought and did
    extension: str | None
    extension_error: str | None
    prebuild: dict[str, Any] | None  # the build phase's entry, as this worker saw it
    tf32_by_candidate: bool | None
    outside_names: list[str] | None  # globals taken from the problem's namespace
    started_processes: list[str] | None  # commands its worker and their children ran
    static_scan: list[str] | None
    custom_kernels: list[str] | None
    launched_kernels: int | None
    torch_only: bool | None
    kernel_attribution: str | None  # graph, cupti or profiler: how the kernels were read
    ncu_kernels: list[dict[str, Any]] | None  # --kb-profile: Nsight Compute's figures per kernel
    ncu_error: str | None  # --kb-profile: why they could not be read
    # how it was measured
    timing: str | None
    timing_stopped: str | None
    baseline_source: str | None
    baseline_stats: dict[str, Any] | None
    candidate_stats: dict[str, Any] | None
    speedup_interval: list[float | None] | None
    speedup_margin: float | None  # how far above p the speedup must read to count (timing.margin)
    baseline_wall_time: float | None
    baseline_issue_time: float | None  # of baseline_wall_time, issuing the calls (the host's part)
    candidate_wall_time: float | None
    speed_of_light: dict[str, Any] | None
    # where and when
    confinement: str | None
    harness_s: dict[str, float] | None
    load_phases: dict[str, float] | None  # where the worker's load spent its time
    timing_phases: dict[str, float] | None  # where a timing spent its time
    correct_phases: dict[str, float] | None  # where the correctness stage spent its time
    held: dict[str, list[float]] | None
    aside: dict[str, list[list[float]]] | None  # spans a stage let the device go (builds, timings)
    placement: dict[str, str | None] | None
    memory: dict[str, Any] | None  # out_of_memory: the device's memory then (gpu/memory.py)
    fingerprint: Fingerprint | None


# The fields every record has, whoever wrote it (this package, an older version of it, or
# upstream's results read as records), and by which every reader finds its case.
KEY_FIELDS = ("candidate_set", "level", "problem_id", "sample")
CaseKey = tuple[str, int, int, str]  # those fields' values: (set, level, problem id, sample)


class NotARecord(ValueError):
    """JSON that does not hold a record; the message says what is missing."""


# The record's fields that add up seconds by name: harness_s (where the harness's time went,
# per request and wait), timing_phases (where a timing's went) and correct_phases (where the
# correctness stage's went).
SecondsField = Literal["harness_s", "timing_phases", "correct_phases"]


def new_record(level: int, problem_id: int, problem: str, candidate_set: str, sample: str,
               candidate_path: str | None) -> Record:
    """A record with every field that is always there; the verdict's fields still unset."""
    return {
        "level": level,
        "problem_id": problem_id,
        "problem": problem,
        "candidate_set": candidate_set,
        "sample": sample,
        "candidate_path": candidate_path,
        "compiled": False,
        "correct": False,
        "speedup": None,
        "baseline_time": None,
        "candidate_time": None,
        "status": None,
        "error": None,
        "extension": None,
        "extension_error": None,
        "upstream": None,  # upstream KernelBench's verdict (judge/upstream.py), once compiled
        "tf32_by_candidate": None,  # the candidate switched TF32 on (fp32 references keep it off)
    }


def from_json(obj: object) -> Record:
    """A record read from JSON, once it is an object with the key fields; the same object, not
    a copy. Its other fields are taken as the schema has them."""
    if not isinstance(obj, dict):
        raise NotARecord(f"a record is a JSON object, not {type(obj).__name__}")
    missing = [name for name in KEY_FIELDS if name not in obj]
    if missing:
        raise NotARecord(f"a record without {', '.join(missing)}")
    return cast(Record, obj)


def copy_of(record: Record) -> Record:
    """A shallow copy a later stage fills in, leaving the earlier stage's record as it was."""
    return cast(Record, dict(record))


def upstream_correct(record: Record) -> bool | None:
    """Upstream's correctness verdict, where the record has one."""
    verdict = record.get("upstream")
    return verdict["correct"] if verdict else None


def set_status(record: Record, status: str, error: str | None) -> None:
    """The verdict of a case that was not judged (no candidate, or the run stopped first)."""
    record.update({"status": status, "error": error})


def set_verdict(record: Record, item: str, verdict: str) -> None:
    """What an item (compile, correct, speed) settled with, beside the others'."""
    record["verdicts"] = {**(record.get("verdicts") or {}), item: verdict}


def set_fingerprint(record: Record, fingerprint: Fingerprint | None) -> None:
    """What the record was made from (reporting/resume.py's fingerprint), for a later resume."""
    record["fingerprint"] = fingerprint


def add_flag(record: Record, text: str) -> None:
    """Append a note for whoever reads the verdict; a list of them is made on the first."""
    record["flags"] = [*(record.get("flags") or []), text]


def has_flag(record: Record, text: str) -> bool:
    return text in (record.get("flags") or [])


def replace_flags(record: Record, drop: list[str], text: str) -> None:
    """The flags without those in drop, and text last (a note that keeps only its latest)."""
    record["flags"] = [*(f for f in record.get("flags") or [] if f not in drop), text]


def charge(record: Record, stage: str, seconds: float, field: SecondsField = "harness_s") -> None:
    """Add seconds spent on a stage (or a phase) to the record's harness_s (or field)."""
    spent = dict(record.get(field) or {})
    spent[stage] = round(spent.get(stage, 0.0) + seconds, 6)
    record[field] = spent


@contextlib.contextmanager
def charged(record: Record, stage: str, field: SecondsField) -> Iterator[None]:
    """charge() the seconds of the block, however it ends."""
    started = time.perf_counter()
    try:
        yield
    finally:
        charge(record, stage, time.perf_counter() - started, field)


MAX_STARTED_PROCESSES = 20


def note_started(record: Record, commands: list[str]) -> None:
    """Add the commands a request's worker (or its children) started, each once, at most
    MAX_STARTED_PROCESSES in all."""
    if not commands:
        return
    kept = list(record.get("started_processes") or [])
    for command in commands:
        if command not in kept and len(kept) < MAX_STARTED_PROCESSES:
            kept.append(command)
    record["started_processes"] = kept


def mark_held(record: Record, stage: str, span: list[float]) -> None:
    """When a stage held the device: [from, to] in seconds since the epoch."""
    record["held"] = {**(record.get("held") or {}), stage: span}


def note_aside(record: Record, stage: str, spans: list[list[float]]) -> None:
    """The spans in which a stage let others use the device (a build, others' timings)."""
    record["aside"] = {**(record.get("aside") or {}), stage: spans}


@cache
def schema() -> dict[str, Any]:
    return cast(dict[str, Any], json.loads(SCHEMA_PATH.read_text()))


def record_fields() -> set[str]:
    """The field names the schema allows in a record."""
    return set(schema()["$defs"]["record"]["properties"])
