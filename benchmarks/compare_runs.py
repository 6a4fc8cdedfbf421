"""Repeatability: how much the speedups of the same candidates move between two runs.

    python benchmarks/compare_runs.py FIRST.json SECOND.json [--set reference]

Reads two JSON reports of the plugin and prints the median and 95th percentile of the relative
speedup difference |s1 - s2| / s1 over problems timed in both, split at 10 us of eager time
(below that, problems are launch-bound and timing noise is larger).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys

LAUNCH_BOUND_S = 10e-6


def speedups(path: str, candidate_set: str) -> dict[tuple, tuple[float, float]]:
    results = json.loads(open(path).read())["results"]
    return {(r["level"], r["problem_id"], r["sample"]): (r["speedup"], r["baseline_time"])
            for r in results if r["candidate_set"] == candidate_set and r.get("speedup")}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("first")
    parser.add_argument("second")
    parser.add_argument("--set", default="reference")
    args = parser.parse_args(argv)
    one, two = speedups(args.first, args.set), speedups(args.second, args.set)
    groups: dict[str, list[float]] = {f">= {LAUNCH_BOUND_S * 1e6:g} us": [],
                                      f"< {LAUNCH_BOUND_S * 1e6:g} us": []}
    for key in sorted(one.keys() & two.keys()):
        (s1, base), (s2, _) = one[key], two[key]
        label = f">= {LAUNCH_BOUND_S * 1e6:g} us" if base >= LAUNCH_BOUND_S \
            else f"< {LAUNCH_BOUND_S * 1e6:g} us"
        groups[label].append(abs(s1 - s2) / s1 * 100)
    print(f"{len(one.keys() & two.keys())} problems timed in both runs (set {args.set})")
    for label, diffs in groups.items():
        if diffs:
            print(f"eager {label}: n={len(diffs)}, median |diff| {statistics.median(diffs):.2f}%, "
                  f"p95 {percentile(diffs, 0.95):.2f}%, max {max(diffs):.2f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
