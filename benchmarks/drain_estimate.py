"""How long a run's timings waited for the device to drain, estimated from its JSON report.

  python benchmarks/drain_estimate.py REPORT.json [--batch 4] [--gather 3.0] [--top 8]

Records say when each stage held the device (`held`, less `aside`), not when a timing asked,
so the ask is taken as the end of the case's last shared span before its timing. Timings with
no shared span starting between them form one drain; its gate closed at the `batch`-th ask or
`gather` s after the first (the rule of devices.gate_is_closed, for a run at -n 2*batch), and
the drain is the time from then to the first timing. Printed: the drains' count, sum, median
and p90, and the longest, each with the shared span that ended last before it (what the drain
likely waited for: a hint, since a span of a stage nested in another can end there too).
"""

from __future__ import annotations

import argparse
import json
import statistics

from pytest_kernelbench.gpu.devices import GATHER_S
from pytest_kernelbench.reporting.holds import hold_spans, timed_alone


def drains(records: list[dict], batch: int, gather_s: float) -> list[tuple[float, str]]:
    """(seconds, what it waited for) of each drain of the device (one device per report)."""
    timings, shared, asks = [], [], {}
    for record in records:
        name = f"L{record['level']}/{record['problem_id']}"
        spans = hold_spans(record)
        timed = timed_alone(record)
        for stage, start, end in spans:
            (timings if stage == "speed" and timed else shared).append((start, end, f"{name}:{stage}"))
        ends = [end for stage, _, end in spans if stage not in ("speed", "attribute", "ncu")]
        if timed and ends:
            asks[name] = max(ends)
    timings.sort()
    shared.sort()
    batches: list[list[tuple[float, float, str]]] = []
    for timing in timings:
        if batches and not any(batches[-1][-1][1] <= s[0] < timing[0] for s in shared):
            batches[-1].append(timing)
        else:
            batches.append([timing])
    found = []
    for group in batches:
        first = group[0][0]
        asked = sorted(asks[t[2].split(":")[0]] for t in group if t[2].split(":")[0] in asks)
        if not asked:
            continue
        closed = min(asked[batch - 1] if len(asked) >= batch else float("inf"),
                     asked[0] + gather_s, first)
        before = [s for s in shared if s[1] <= first + 1e-3]
        waited_for = max(before, key=lambda s: s[1])[2] if before else "-"
        found.append((first - closed, waited_for))
    return found


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("report")
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--gather", type=float, default=GATHER_S)
    parser.add_argument("--top", type=int, default=8)
    args = parser.parse_args()
    records = [r for r in json.load(open(args.report))["results"] if r.get("held")]
    found = drains(records, args.batch, args.gather)
    seconds = sorted(s for s, _ in found)
    print(f"{len(found)} drains, {sum(seconds):.1f} s in all, median {statistics.median(seconds):.2f} s, "
          f"p90 {seconds[int(0.9 * len(seconds))]:.2f} s")
    for spent, waited_for in sorted(found, reverse=True)[:args.top]:
        print(f"  {spent:6.2f} s, last to end before it: {waited_for}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
