"""Which device each pytest(-xdist) process uses, and the per-device lock that keeps timing alone.

With `pytest -n N`, worker gwK takes GPU K mod (number of GPUs), so N workers spread over every
GPU of the host. Every stage holds its device's lock: compile and correctness share it, timing
holds it alone, so no measurement ever overlaps other work on that device.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path

WORKER_ID = re.compile(r"^gw(\d+)$")


def bind_device(device: str, worker_id: str | None, device_count: int) -> str:
    """The device for one process: a plain 'cuda' becomes cuda:K for xdist worker gwK."""
    if device != "cuda" or worker_id is None or device_count < 1:
        return device
    match = WORKER_ID.match(worker_id)
    if not match:
        return device
    return f"cuda:{int(match.group(1)) % device_count}"


def lock_path(device: str) -> Path:
    """One lock file per physical device on this host (CUDA_VISIBLE_DEVICES taken into account)."""
    name = device.replace(":", "")
    if device.startswith("cuda"):
        index = int(device.partition(":")[2] or 0)
        visible = [v for v in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if v.strip()]
        if index < len(visible):
            name = f"cuda-visible-{visible[index].strip()}"
    return Path(tempfile.gettempdir()) / f"pytest-kernelbench-{name}.lock"


@contextlib.contextmanager
def device_lock(device: str, exclusive: bool) -> Iterator[None]:
    """Hold the device's lock: shared for ordinary work, exclusive for timing."""
    with open(lock_path(device), "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def timing_overlaps(records: list[dict]) -> list[tuple[str, str]]:
    """Pairs of lock holds on one physical device where a timing overlapped any other hold.

    Reads the `placement` and `held` fields of report records; an empty list is what the
    per-device lock promises. Holds of one process that nest (compile inside correct) are shared
    and never counted.
    """
    holds: dict[str, list[tuple[float, float, str, bool]]] = {}
    for record in records:
        where = record.get("placement") or {}
        device = str(where.get("gpu_uuid") or where.get("device"))
        label = f"{record['candidate_set']}/L{record['level']}/{record['problem_id']}/{record['sample']}"
        for stage, (start, end) in (record.get("held") or {}).items():
            holds.setdefault(device, []).append((start, end, f"{label}:{stage}", stage == "speed"))
    found = []
    for on_device in holds.values():
        on_device.sort()
        for i, (start, end, name, timing) in enumerate(on_device):
            for other_start, other_end, other, other_timing in on_device[i + 1:]:
                if other_start >= end:
                    break
                if (timing or other_timing) and other_start < end and start < other_end:
                    found.append((name, other))
    return found
