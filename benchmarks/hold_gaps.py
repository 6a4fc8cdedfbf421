"""Where a run's device was held by one worker alone, or by nobody, from its JSON report.

  python benchmarks/hold_gaps.py REPORT.json [--top 8]

Reads each record's `held` spans (less `aside`, holds.hold_spans), one device per report.
Prints:
- the seconds each stage held the device, summed over the records (steps aside left out);
- the seconds a single shared holder had the device while no timing ran, by stage and by
  case: a stage that others wait behind (with --kb-drain=stop, one that is not stopped);
- the gaps in which nobody held it: their count, sum and median, the longest with the span
  that ended before each and the one that began after it, and their sum by that pair of stages;
- the timings: those for a verdict and those for upstream's figure alone (a candidate only
  upstream's rules pass), each with its seconds held alone and in the worker's `time`
  request, and by part where the records hold `timing_phases`; the rounds of the verdicts'
  timings against upstream's 100, the seconds their calls took against the harness's work
  around them, and why they ended.
"""

from __future__ import annotations

import argparse
import collections
import json
import statistics

from pytest_kernelbench.judge.speed_stage import UPSTREAM_PERF_TRIALS
from pytest_kernelbench.reporting.holds import held_alone, hold_spans, timed_alone


def events(records: list[dict]) -> list[tuple[float, int, bool, str]]:
    """(time, +1 start / -1 end, held alone, 'L1/2:stage') of every hold, in time order."""
    found = []
    for record in records:
        timed = timed_alone(record)
        name = f"L{record['level']}/{record['problem_id']}"
        for stage, start, end in hold_spans(record):
            alone = held_alone(stage, timed)
            found += [(start, 1, alone, f"{name}:{stage}"), (end, -1, alone, f"{name}:{stage}")]
    return sorted(found, key=lambda e: (e[0], e[1]))  # an end before a start at one time


def single_holders(records: list[dict]) -> collections.Counter:
    """Seconds each shared hold had the device to itself, no timing running."""
    seconds: collections.Counter = collections.Counter()
    holders: set[str] = set()
    alone, last = 0, None
    for when, step, is_alone, label in events(records):
        if last is not None and not alone and len(holders) == 1:
            seconds[next(iter(holders))] += when - last
        last = when
        if is_alone:
            alone += step
        elif step > 0:
            holders.add(label)
        else:
            holders.discard(label)
    return seconds


def idle_gaps(records: list[dict]) -> list[tuple[float, str, str]]:
    """(seconds, the hold that ended before, the hold that began after) of each gap."""
    gaps, held, ended_at, ended = [], 0, None, "-"
    for when, step, _, label in events(records):
        if step > 0 and held == 0 and ended_at is not None:
            gaps.append((when - ended_at, ended, label))
        held += step
        if held == 0:
            ended_at, ended = when, label
    return gaps


def timings(records: list[dict]) -> None:
    """Print the timings' seconds, for a verdict and for upstream's figure alone."""
    def alone_s(record: dict) -> float:
        start, end = record["held"]["speed"]
        return end - start

    def time_s(record: dict) -> float:
        return (record.get("harness_s") or {}).get("time", 0.0)

    timed = [r for r in records if timed_alone(r) and "speed" in r["held"]]
    ours = [r for r in timed if r.get("timing") is not None]
    theirs = [r for r in timed if r.get("timing") is None]
    for name, group in (("for a verdict", ours), ("for upstream's figure alone", theirs)):
        print(f"timings {name}: {len(group)}, {sum(map(alone_s, group)):.1f} s alone, "
              f"{sum(map(time_s, group)):.1f} s of it in the worker's timing")
        phases: collections.Counter = collections.Counter()
        for record in group:
            phases.update(record.get("timing_phases") or {})
        if phases:
            print("  by part: " + ", ".join(f"{part} {seconds:.1f} s"
                                           for part, seconds in phases.most_common()))
    rounds = [(r["baseline_stats"]["n"], time_s(r)) for r in ours if r.get("baseline_stats")]
    if rounds:
        over = sum(seconds * (1 - UPSTREAM_PERF_TRIALS / n) for n, seconds in rounds
                   if n > UPSTREAM_PERF_TRIALS)
        print(f"  verdicts' rounds: median {statistics.median(n for n, _ in rounds):.0f}; at "
              f"most {UPSTREAM_PERF_TRIALS} would have saved {over:.1f} s of their "
              f"{sum(seconds for _, seconds in rounds):.1f} s")
        stats = [(r["baseline_stats"], r["candidate_stats"], time_s(r)) for r in ours
                 if r.get("baseline_stats") and r.get("candidate_stats")]
        calls = sum(b["n"] + c["n"] for b, c, _ in stats)
        calls_s = sum(b["n"] * b["median_s"] + c["n"] * c["median_s"] for b, c, _ in stats)
        around_s = sum(t for _, _, t in stats) - calls_s  # warm-up calls included
        ended = collections.Counter(r.get("timing_stopped") for r in ours)
        worst_rse = statistics.median(max(b["rse"], c["rse"]) for b, c, _ in stats)
        print(f"  verdicts' calls: {calls} timed, {calls_s:.1f} s (rounds times each side's "
              f"median); {around_s:.1f} s around them, {around_s / max(calls, 1) * 1e3:.2f} ms "
              f"a call; ended by {dict(ended)}; the worse side's RSE at the end, median "
              f"{worst_rse:.2%}")


def stage(label: str) -> str:
    return label.split(":")[1]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("report")
    parser.add_argument("--top", type=int, default=8)
    args = parser.parse_args()
    records = [r for r in json.load(open(args.report))["results"] if r.get("held")]

    timings(records)
    held: collections.Counter = collections.Counter()
    for record in records:
        for name, start, end in hold_spans(record):
            held[name] += end - start
    print(f"holds of {len(records)} records summed by stage: "
          + ", ".join(f"{name} {seconds:.0f} s" for name, seconds in held.most_common()))
    single = single_holders(records)
    by_stage: collections.Counter = collections.Counter()
    for label, seconds in single.items():
        by_stage[stage(label)] += seconds
    print(f"one shared holder: {sum(single.values()):.1f} s; by stage: "
          + ", ".join(f"{name} {seconds:.1f} s" for name, seconds in by_stage.most_common()))
    for label, seconds in single.most_common(args.top):
        print(f"  {seconds:6.2f} s  {label}")

    gaps = idle_gaps(records)
    if not gaps:
        print("no gap with nobody holding the device")
        return 0
    lengths = [seconds for seconds, _, _ in gaps]
    print(f"{len(gaps)} gaps with nobody holding the device, {sum(lengths):.1f} s in all, "
          f"median {statistics.median(lengths) * 1e3:.0f} ms")
    for seconds, before, after in sorted(gaps, reverse=True)[:args.top]:
        print(f"  {seconds:6.2f} s  after {before}, before {after}")
    pairs: collections.Counter = collections.Counter()
    for seconds, before, after in gaps:
        pairs[f"{stage(before)} -> {stage(after)}"] += seconds
    print("  by stages: " + ", ".join(f"{pair} {seconds:.1f} s"
                                      for pair, seconds in pairs.most_common()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
