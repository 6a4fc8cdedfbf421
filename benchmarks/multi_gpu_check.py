"""What a multi-GPU run (`pytest -n N`) did with its GPUs, read from its JSON report.

    python benchmarks/multi_gpu_check.py MULTI.json [--one ONE_GPU.json] [--smi SMI.csv]

Prints which GPU each xdist worker used (device and GPU UUID from each record's `placement`),
whether any timing overlapped other work on its GPU (each record's `held` lock windows), and how
long the items kept each GPU busy. With --one, the verdicts and speedups are compared with a
one-GPU run of the same candidates. With --smi, a CSV that
`nvidia-smi --query-gpu=timestamp,index,uuid,utilization.gpu,memory.used --format=csv,noheader
-lms 1000` wrote during the run shows each GPU's load as the driver saw it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict

from compare_runs import LAUNCH_BOUND_S, percentile

from pytest_kernelbench.reporting.holds import timing_overlaps


def load(path: str) -> list[dict]:
    return json.loads(open(path).read())["results"]


def key(record: dict) -> tuple:
    return record["candidate_set"], record["level"], record["problem_id"], record["sample"]


def workers_to_gpus(records: list[dict]) -> dict[str, set[tuple[str, str]]]:
    seen: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for record in records:
        where = record.get("placement")
        if where:
            seen[where["worker"] or "main"].add((where["device"], where["gpu_uuid"] or "-"))
    return seen


def hold_span(records: list[dict]) -> tuple[float, float]:
    windows = [w for r in records for w in (r.get("held") or {}).values()]
    return min(w[0] for w in windows), max(w[1] for w in windows)


def busy_seconds(records: list[dict]) -> dict[str, tuple[int, float]]:
    """Per GPU: the items timed on it and the seconds its timings held it."""
    per_gpu: dict[str, list[float]] = defaultdict(list)
    for record in records:
        speed = (record.get("held") or {}).get("speed")
        if speed:
            gpu = record["placement"]["gpu_uuid"] or record["placement"]["device"]
            per_gpu[gpu].append(speed[1] - speed[0])
    return {gpu: (len(times), sum(times)) for gpu, times in sorted(per_gpu.items())}


def sandbox_elsewhere(records: list[dict]) -> list[str]:
    """Records whose sandbox worker reported another GPU than its pytest process used."""
    return [f"{'/'.join(map(str, key(r)))}: {r['placement']['worker_gpu_uuid']} vs "
            f"{r['placement']['gpu_uuid']}" for r in records
            if (r.get("placement") or {}).get("worker_gpu_uuid")
            and r["placement"]["worker_gpu_uuid"] != r["placement"]["gpu_uuid"]]


def compare(one: list[dict], many: list[dict]) -> int:
    """Print verdict and speedup differences and the wall-time ratio; the number of differing
    verdicts."""
    first = {key(r): r for r in one}
    second = {key(r): r for r in many}
    common = sorted(first.keys() & second.keys())
    differ = [k for k in common if first[k]["status"] != second[k]["status"]]
    print(f"verdicts: {len(common) - len(differ)}/{len(common)} records equal to the one-GPU run"
          + (f"; only in one run: {len(first.keys() ^ second.keys())}"
             if first.keys() ^ second.keys() else ""))
    for k in differ:
        print(f"  differs: {'/'.join(map(str, k))}: {first[k]['status']} -> {second[k]['status']}")
    for candidate_set in sorted({k[0] for k in common}):
        diffs = {True: [], False: []}  # eager time >= LAUNCH_BOUND_S or not
        for k in common:
            a, b = first[k], second[k]
            if k[0] == candidate_set and a.get("speedup") and b.get("speedup"):
                diffs[a["baseline_time"] >= LAUNCH_BOUND_S].append(
                    abs(a["speedup"] - b["speedup"]) / a["speedup"] * 100)
        for long_enough, values in diffs.items():
            if values:
                label = ">=" if long_enough else "<"
                print(f"speedups, set {candidate_set}, eager {label} {LAUNCH_BOUND_S * 1e6:g} us: "
                      f"n={len(values)}, median |diff| {statistics.median(values):.2f}%, "
                      f"p95 {percentile(values, 0.95):.2f}%, max {max(values):.2f}%")
    start, end = hold_span(one)
    one_s = end - start
    start, end = hold_span(many)
    print(f"item phase (first lock to last release): one GPU {one_s:.0f} s, "
          f"this run {end - start:.0f} s, ratio {(end - start) / one_s:.2f}")
    return len(differ) + len(first.keys() ^ second.keys())


def summarize_smi(path: str) -> None:
    samples: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for line in open(path):
        parts = [p.strip() for p in line.split(",")]
        if len(parts) < 5 or not parts[3].split()[0].isdigit():
            continue
        index, uuid = parts[1], parts[2]
        samples[f"{index} {uuid}"].append((float(parts[3].split()[0]), float(parts[4].split()[0])))
    for gpu, rows in sorted(samples.items()):
        busy = sum(util > 0 for util, _ in rows)
        print(f"nvidia-smi GPU {gpu}: {len(rows)} samples, {busy} with utilization > 0 "
              f"(mean {statistics.mean(u for u, _ in rows):.0f}%), "
              f"memory used up to {max(m for _, m in rows):.0f} MiB")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report")
    parser.add_argument("--one", help="the JSON report of a one-GPU run of the same candidates")
    parser.add_argument("--smi", help="nvidia-smi CSV sampled during the run")
    args = parser.parse_args(argv)
    records = load(args.report)
    placed = workers_to_gpus(records)
    for worker, where in sorted(placed.items()):
        print(f"worker {worker}: " + ", ".join(f"{device} ({uuid})" for device, uuid in sorted(where)))
    one_each = all(len(w) == 1 for w in placed.values())
    print(f"each worker on one GPU: {'yes' if one_each else 'NO'}; "
          f"GPUs used: {len({u for w in placed.values() for _, u in w})}")
    elsewhere = sandbox_elsewhere(records)
    print(f"sandbox workers on their pytest process's GPU: "
          f"{'yes' if not elsewhere else f'NO ({len(elsewhere)} records)'}")
    for line in elsewhere[:10]:
        print(f"  elsewhere: {line}")
    holds = sum(len(r.get("held") or {}) for r in records)
    timed = sum("speed" in (r.get("held") or {}) for r in records)
    overlaps = timing_overlaps(records)
    print(f"lock holds: {holds}, of them timings: {timed}; timings that overlapped other work "
          f"on their GPU: {len(overlaps)}")
    for pair in overlaps[:10]:
        print(f"  overlap: {pair[0]} with {pair[1]}")
    for gpu, (count, seconds) in busy_seconds(records).items():
        print(f"GPU {gpu}: {count} items timed, {seconds:.0f} s holding it alone")
    differ = compare(load(args.one), records) if args.one else 0
    if args.smi:
        summarize_smi(args.smi)
    return 1 if overlaps or elsewhere or differ or not one_each else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
