"""Where a run ran out of device memory, and what each such case had.

    python benchmarks/memory_verdicts.py REPORT.json

One line per record that is `out_of_memory` or was judged again alone after running out of
memory beside others (its flag): the verdict, the device's total and free GiB when the last run
took it, whether the run's other processes had given their memory back first (and how many did
not answer), and the peaks of the candidate's worker and of the judging process; then the
stages admitted alone by their problem's footprint and the seconds they waited for the device
and the others' memory. Exits 1 when an `out_of_memory` verdict stands without the others'
memory given back first.
"""

from __future__ import annotations

import argparse
import json
import sys

FLAG = "ran out of device memory while sharing the device"
ADMITTED = "waited for the device's memory"


def gib(value: int | None) -> str:
    return "-" if value is None else f"{value / 2**30:.1f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report")
    args = parser.parse_args()
    results = json.load(open(args.report))["results"]
    unfair = 0
    shown = [r for r in results if r.get("status") == "out_of_memory"
             or any(FLAG in flag for flag in r.get("flags") or [])]
    print(f"{len(shown)} cases ran out of memory at least once; "
          f"{sum(r.get('status') == 'out_of_memory' for r in shown)} out_of_memory verdicts")
    for record in shown:
        memory = record.get("memory") or {}
        given = memory.get("others_gave_back_first")
        if record.get("status") == "out_of_memory" and not (
                given and memory.get("others_workers_stopped")):
            unfair += 1
        print(f"  L{record['level']}/{record['problem_id']} {record['sample']}: "
              f"{record.get('status')}, total {gib(memory.get('total_bytes'))} GiB, "
              f"free at start {gib(memory.get('free_at_start_bytes'))} GiB, others gave back "
              f"first: {given} (silent {memory.get('others_silent')}, workers stopped "
              f"{memory.get('others_workers_stopped')}), worker peak "
              f"{gib(memory.get('worker_peak_bytes'))} GiB, judge peak "
              f"{gib(memory.get('judge_peak_bytes'))} GiB")
    admitted = [r for r in results if any(ADMITTED in flag for flag in r.get("flags") or [])]
    waits = [(r.get("memory") or {}).get("waited_s") or 0.0 for r in admitted]
    print(f"{len(admitted)} cases waited for the device's memory by their problem's footprint: "
          f"{sum(waits):.1f} s waiting in all, longest {max(waits, default=0.0):.1f} s")
    for record, waited in zip(admitted, waits):
        print(f"  L{record['level']}/{record['problem_id']} {record['sample']}: "
              f"{record.get('status')}, waited {waited:.1f} s")
    if unfair:
        print(f"{unfair} out_of_memory verdicts stand without the others' memory given back "
              "and their workers stopped")
    return 1 if unfair else 0


if __name__ == "__main__":
    sys.exit(main())
