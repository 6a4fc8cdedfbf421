"""Print what a GPU run shows about each candidate set: statuses and the speedup spread.

    python benchmarks/summarize_report.py reports/kernelbench.json [--kernels] [--overhead]

--overhead adds where each set's time went: the worker requests per operation (the harness's
own cost around the candidate), the parts of the correctness stage, how timing stopped, and the
speed-of-light fractions.
"""

from __future__ import annotations

import json
import statistics
import sys
from collections import Counter


def overhead(records: list[dict]) -> None:
    spent: dict[str, list[float]] = {}
    for r in records:
        for op, seconds in (r.get("harness_s") or {}).items():
            spent.setdefault(op, []).append(seconds)
    if spent:
        print("  seconds per candidate by request (median / total): " + ", ".join(
            f"{op} {statistics.median(v):.2f}/{sum(v):.0f}" for op, v in spent.items()))
    parts: Counter[str] = Counter()
    for r in records:
        parts.update(r.get("correct_phases") or {})
    if parts:
        print("  correctness stage by part (total s): " + ", ".join(
            f"{name} {seconds:.1f}" for name, seconds in parts.most_common()))
    stopped = Counter(r.get("timing_stopped") for r in records if r.get("timing_stopped"))
    timings = Counter(r.get("timing") for r in records if r.get("timing"))
    if stopped:
        print(f"  timing: {dict(timings)}, stopped by {dict(stopped)}")
    fractions = sorted(r["speed_of_light"]["candidate_fraction"] for r in records
                       if (r.get("speed_of_light") or {}).get("candidate_fraction"))
    if fractions:
        print(f"  speed-of-light fraction of candidates: median {statistics.median(fractions):.3f}, "
              f"max {fractions[-1]:.3f}")


def main(path: str, show_kernels: bool = False, show_overhead: bool = False) -> int:
    report = json.loads(open(path).read())
    print("environment:", json.dumps(report["environment"]))
    by_set: dict[str, list[dict]] = {}
    for record in report["results"]:
        by_set.setdefault(record["candidate_set"], []).append(record)
    for name, records in by_set.items():
        statuses = Counter(r["status"] for r in records)
        speedups = sorted(r["speedup"] for r in records if r["speedup"] is not None)
        print(f"set {name}: {len(records)} records, statuses {dict(statuses)}")
        if show_overhead:
            overhead(records)
        if speedups:
            inside = sum(0.9 <= s <= 1.1 for s in speedups)
            print(f"  speedup min {speedups[0]:.3f} median {statistics.median(speedups):.3f} "
                  f"max {speedups[-1]:.3f}; within 0.9-1.1: {inside}/{len(speedups)}")
        for r in records:
            if show_kernels and r.get("torch_only") is not None:
                print(f"  L{r['level']}/{r['problem_id']} [{r['sample']}]: torch_only="
                      f"{r['torch_only']} custom kernels {r.get('custom_kernels')} "
                      f"flags {r.get('flags')}")
            if r["status"] not in ("passed", "missing"):
                print(f"  L{r['level']}/{r['problem_id']} {r['problem']} [{r['sample']}]: "
                      f"{r['status']}: {r['error']}")
        outliers = [r for r in records if r["speedup"] is not None
                    and not 0.9 <= r["speedup"] <= 1.1]
        for r in sorted(outliers, key=lambda r: r["speedup"]):
            print(f"  L{r['level']}/{r['problem_id']} {r['problem']}: speedup {r['speedup']:.3f} "
                  f"(baseline {r['baseline_time'] * 1e6:.1f} us, "
                  f"candidate {r['candidate_time'] * 1e6:.1f} us)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], show_kernels="--kernels" in sys.argv[2:],
                  show_overhead="--overhead" in sys.argv[2:]))
