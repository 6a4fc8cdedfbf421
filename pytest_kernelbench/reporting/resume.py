"""Records that outlive the run: streamed to disk as they finish, and reused by a later run.

Every record a run settles is appended to a JSON-lines stream beside the report
(`reports/kernelbench.jsonl` for `reports/kernelbench.json`), so a run that dies loses nothing
already measured. `--kb-resume=PATH` (a report or a stream) reuses each record whose
fingerprint matches: the same candidate file content, problem source (and manifest tolerances)
and settings that shape a verdict. Those cases are not run again; their records join the new
report as they were.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from pytest_kernelbench.record import CaseKey, Fingerprint, Record, from_json
from pytest_kernelbench.suite.discovery import Case

# The settings a record's verdict and figures depend on; paths, selection, parallelism and
# scheduling do not change what a case gives.
VERDICT_SETTINGS = ("p", "trials", "atol", "rtol", "precision", "tolerance", "tf32", "mode",
                    "timeout_s", "seed", "time_budget_s", "min_rounds", "flag_speedup",
                    "require_kernel", "timing", "target_rse", "baseline", "upstream_rules",
                    "allow_input_changes", "order_trials", "confine")


# Every stage that ran notes in its record's `held` when it held the device; a case is
# settled once its last stage ran (judged, timed or skipped after an earlier failure).
LAST_STAGE = "speed"


class ResumeError(Exception):
    """A file that cannot be read as records; the message names it."""


def stream_path(report_path: Path) -> Path:
    return report_path.with_suffix(".jsonl")


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def settings_digest(settings: Any, device: str) -> str:
    """Digest of the verdict-shaping settings and the kind of device (cuda:1 = cuda:0: the GPU
    model is in the report's environment)."""
    chosen = {name: value for name, value in asdict(settings).items() if name in VERDICT_SETTINGS}
    chosen["device"] = device.partition(":")[0]
    return digest(json.dumps(chosen, sort_keys=True, default=str).encode())[:16]


def fingerprint(case: Case, settings_key: str, problem_digest: str,
                tolerances: tuple[Any, ...] | None = None) -> Fingerprint | None:
    """What a record of this case must have been made from to be reused; None for no candidate.
    problem_digest is the problem file's (as integrity.ProblemDigests holds it)."""
    if case.candidate is None:
        return None
    problem = (problem_digest + json.dumps(tolerances)).encode()
    return {"candidate": digest(case.candidate.path.read_bytes())[:16],
            "problem": digest(problem)[:16], "settings": settings_key}


def record_key(record: Record) -> CaseKey:
    return (record["candidate_set"], record["level"], record["problem_id"], record["sample"])


def read_records(path: Path) -> list[Record]:
    """The records of a JSON report, or the latest record of each case in a JSON-lines stream
    (a line per settled stage, later stages replacing earlier ones)."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise ResumeError(f"{path}: {exc.strerror}") from None
    if path.suffix == ".jsonl":
        latest: dict[CaseKey, tuple[int, Record]] = {}
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                record = from_json(entry["record"])
                key, stage = record_key(record), int(entry["stage"])
            except (ValueError, KeyError, TypeError):
                if number == len(text.splitlines()):
                    break  # the last line of a run that died while writing it
                raise ResumeError(f"{path}:{number}: not a kernelbench record line") from None
            if key not in latest or stage >= latest[key][0]:
                latest[key] = (stage, record)
        return [record for _, record in latest.values()]
    try:
        records = [from_json(obj) for obj in json.loads(text)["results"]]
    except (ValueError, KeyError, TypeError) as exc:
        raise ResumeError(f"{path}: not a kernelbench JSON report ({exc})") from None
    return records


def reusable(records: list[Record],
             fingerprints: dict[CaseKey, Fingerprint | None]) -> dict[CaseKey, Record]:
    """The records that may stand for their case in this run, by case key: made from the same
    files and settings, and settled to their last stage. A record of a run stopped before the
    case's speed item (or one that selected none) says `passed` on correctness alone; reused,
    it would stand for a speed that was never measured."""
    return {record_key(r): r for r in records
            if r.get("fingerprint") is not None
            and r.get("fingerprint") == fingerprints.get(record_key(r))
            and LAST_STAGE in (r.get("held") or {})}


def reuse_line(reused: int, read: int, path: Path, running: int) -> str:
    """What --kb-resume took: `reused 3 of 5 records from PATH; running 2` (the records that
    stand for their case, those the file holds, the selected cases still to run)."""
    return f"kernelbench: reused {reused} of {read} records from {path}; running {running}"


class RecordStream:
    """Appends one JSON line per settled stage of a record; flushed at once."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.handle = path.open("w")

    def write(self, record: Record, stage: int) -> None:
        self.handle.write(json.dumps({"stage": stage, "record": record}, default=str) + "\n")
        self.handle.flush()

    def close(self) -> None:
        self.handle.close()
