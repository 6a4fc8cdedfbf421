"""The result record: one per (problem, candidate set, sample), as the JSON report holds it.

`report.schema.json` (shipped with the package) is the contract and documents every field;
`Record` mirrors it for type checkers, and a test keeps the two in step. A record is built by
evaluation.base_record and filled in stage by stage; every other module only reads it.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any, TypedDict

SCHEMA_PATH = Path(__file__).with_name("report.schema.json")


class UpstreamVerdict(TypedDict):
    rules: str
    compiled: bool
    correct: bool | None
    speedup: float | None


class Record(TypedDict, total=False):
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
    status: str | None
    error: str | None
    error_details: str
    flags: list[str]
    upstream: UpstreamVerdict | None
    # what the candidate brought and did
    extension: str | None
    extension_error: str | None
    tf32_by_candidate: bool | None
    static_scan: list[str]
    custom_kernels: list[str] | None
    launched_kernels: int
    torch_only: bool | None
    # how it was measured
    timing: str
    timing_stopped: str | None
    baseline_source: str
    baseline_stats: dict[str, Any]
    candidate_stats: dict[str, Any]
    speedup_interval: list[float | None]
    baseline_wall_time: float
    candidate_wall_time: float
    speed_of_light: dict[str, Any]
    # where and when
    confinement: str
    harness_s: dict[str, float]
    held: dict[str, list[float]]
    placement: dict[str, str | None]
    fingerprint: dict[str, str]


@cache
def schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text())


def record_fields() -> set[str]:
    """The field names the schema allows in a record."""
    return set(schema()["$defs"]["record"]["properties"])
