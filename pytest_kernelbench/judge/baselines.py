"""A cache of baseline timings, so that scoring several candidate sets times eager once.

An entry is keyed by everything that changes the baseline's speed: the problem's source, the
GPU and its driver, torch and CUDA versions, the baseline (eager or compiled), the timing mode,
train/eval mode and seed. Entries older than the run's maximum age are stale and re-timed.
Writes are atomic (a temporary file renamed into place), so concurrent workers may share a folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any


def cache_key(fields: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:32]


def read(folder: Path, fields: dict[str, Any], max_age_s: float, now: float) -> list[float] | None:
    """The cached samples for these fields, or None when there are none or they are stale."""
    path = folder / f"{cache_key(fields)}.json"
    try:
        entry = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if entry.get("fields") != fields or now - float(entry.get("created", 0)) > max_age_s:
        return None
    samples = entry.get("samples_s")
    if not isinstance(samples, list) or not samples:
        return None
    return [float(s) for s in samples]


def write(folder: Path, fields: dict[str, Any], samples_s: list[float], now: float) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{cache_key(fields)}.json"
    entry = {"fields": fields, "created": now, "samples_s": samples_s}
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".json")
    with os.fdopen(handle, "w") as out:
        json.dump(entry, out)
    os.replace(temporary, path)
    return path


def source_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
