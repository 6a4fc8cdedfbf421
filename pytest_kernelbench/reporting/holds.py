"""How the devices were held over a run, read from the report records' `held` spans: the
spans themselves, each physical device's schedule (alone, shared, idle, drains) and any overlap
the per-device lock (gpu/devices.py) promises never happens."""

from __future__ import annotations


def timed_alone(record: dict) -> bool:
    """Whether a record's speed stage held the device alone (a failed case's only skips)."""
    return record.get("timing") is not None or \
        (record.get("upstream") or {}).get("speedup") is not None


def _device_of(record: dict) -> str:
    """The physical device: a GPU by its UUID, else the device on its host (the records of a
    cluster name the node: each host's CPU is a device of its own, with locks of its own)."""
    where = record.get("placement") or {}
    device = str(where.get("device"))
    return str(where.get("gpu_uuid") or (f"{where['node']}:{device}" if where.get("node")
                                          else device))


def device_schedule(records: list[dict]) -> dict[str, dict]:
    """How each physical device was shared over a run, from the records' `held` spans: from
    the first hold to the last (`span_s`), the seconds a timing held it alone
    (`exclusive_s`), held by nobody (`idle_s`), and held by N shared holders at once
    (`shared_s_by_holders`: N -> seconds); the timings' `batches` (runs of timings with no
    shared hold starting between them: each cost one drain of the shared work) and
    `timings`. Few holders for long stretches mean drains: workers waiting for a timing
    while the holds before it end."""
    events: dict[str, list[tuple[float, int, bool]]] = {}
    for record in records:
        timed = timed_alone(record)
        for stage, start, end in hold_spans(record):
            by_itself = held_alone(stage, timed)
            on_device = events.setdefault(_device_of(record), [])
            on_device += [(start, 1, by_itself), (end, -1, by_itself)]
    schedules = {}
    for device, on_device in events.items():
        on_device.sort(key=lambda e: (e[0], e[1]))  # an end before a start at the same time
        shared = alone = timings = batches = 0  # holds in progress, timings seen, drains
        exclusive_s = idle_s = 0.0
        by_holders: dict[int, float] = {}
        last = on_device[0][0]
        shared_since_timing = True  # so the next timing starts a drain of its own
        for when, step, is_alone in on_device:
            elapsed = when - last
            if alone:
                exclusive_s += elapsed
            elif shared:
                by_holders[shared] = by_holders.get(shared, 0.0) + elapsed
            else:
                idle_s += elapsed
            last = when
            if is_alone:
                alone += step
                if step > 0:
                    timings += 1
                    batches += int(shared_since_timing)
                    shared_since_timing = False
            else:
                shared += step
                if step > 0:
                    shared_since_timing = True
        schedules[device] = {
            "span_s": on_device[-1][0] - on_device[0][0], "exclusive_s": exclusive_s,
            "idle_s": idle_s, "shared_s_by_holders": dict(sorted(by_holders.items())),
            "timings": timings, "batches": batches}
    return schedules


def held_alone(stage: str, timed: bool) -> bool:
    """Whether a stage holds its device alone: a timing, or Nsight Compute's replays."""
    return stage == "ncu" or (stage == "speed" and timed)


def timing_overlaps(records: list[dict]) -> list[tuple[str, str]]:
    """Pairs of lock holds on one physical device where a hold that needs the device alone (a
    timing, an Nsight Compute profile) overlapped any other hold.

    Reads the `placement` and `held` fields of report records; an empty list is what the
    per-device lock promises. Holds of one process that nest (compile inside correct) are shared
    and never counted.
    """
    holds: dict[str, list[tuple[float, float, str, bool]]] = {}
    for record in records:
        label = f"{record['candidate_set']}/L{record['level']}/{record['problem_id']}/{record['sample']}"
        timed = timed_alone(record)
        for stage, start, end in hold_spans(record):
            holds.setdefault(_device_of(record), []).append((start, end, f"{label}:{stage}",
                                                             held_alone(stage, timed)))
    found = []
    for on_device in holds.values():
        on_device.sort()
        for i, (start, end, name, alone) in enumerate(on_device):
            for other_start, other_end, other, other_alone in on_device[i + 1:]:
                if other_start >= end:
                    break
                if (alone or other_alone) and other_start < end and start < other_end:
                    found.append((name, other))
    return found


def hold_spans(record: dict) -> list[tuple[str, float, float]]:
    """(stage, start, end) of each span a record's stages held the device: its `held` window
    less the spans it stepped aside for a build (`aside`)."""
    spans = []
    aside = record.get("aside") or {}
    for stage, (start, end) in (record.get("held") or {}).items():
        for gap_start, gap_end in sorted(tuple(gap) for gap in aside.get(stage, ())):
            if gap_start > start:
                spans.append((stage, start, gap_start))
            start = max(start, gap_end)
        if end > start:
            spans.append((stage, start, end))
    return spans
