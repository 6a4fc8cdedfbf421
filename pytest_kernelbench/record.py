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
    status: str | None
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
    baseline_wall_time: float | None
    candidate_wall_time: float | None
    speed_of_light: dict[str, Any] | None
    # where and when
    confinement: str | None
    harness_s: dict[str, float] | None
    load_phases: dict[str, float] | None  # where the worker's load spent its time
    timing_phases: dict[str, float] | None  # where a timing spent its time
    held: dict[str, list[float]] | None
    aside: dict[str, list[list[float]]] | None  # spans a stage let the device go (builds, timings)
    placement: dict[str, str | None] | None
    fingerprint: dict[str, str] | None


@cache
def schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text())


def record_fields() -> set[str]:
    """The field names the schema allows in a record."""
    return set(schema()["$defs"]["record"]["properties"])
