"""The batch API's memory over many attempts: the session's process and its judges' resident
memory as attempts settle.

    python benchmarks/api_memory.py [--count 500] [--device cpu] [--judges 1]

Submits `count` attempts of the example ReLU problem through `evaluate_many`, alternately a
correct and a wrong candidate (compile, correctness and, for the correct one, a short timing),
and prints the resident memory (VmRSS) of the session's process and of its judge processes
after the first 50 settled and at every 50th after that, with the growth from the first
reading to the last (the target: flat).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from pytest_kernelbench import Session

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "tests" / "examples"
PROBLEM = EXAMPLES / "problems" / "level1" / "2_ReLU.py"
CANDIDATES = [EXAMPLES / "candidates" / "good" / "level1" / "2_ReLU.py",
              EXAMPLES / "candidates" / "broken" / "level1" / "2_ReLU" / "wrong_values.py"]


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=500)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--judges", type=int, default=1)
    args = parser.parse_args()
    readings = []
    started = time.perf_counter()
    with Session(device=args.device, judges=args.judges, trials=1, time_budget_s=0.02,
                 p=0.0) as session:
        pairs = ((PROBLEM, CANDIDATES[i % 2]) for i in range(args.count))
        statuses: dict[str, int] = {}
        for settled, (_, record) in enumerate(session.evaluate_many(pairs), start=1):
            statuses[record["status"]] = statuses.get(record["status"], 0) + 1
            if settled % 50 == 0:
                judges = [j.process.pid for j in session._batch._judges]  # type: ignore[union-attr]
                readings.append((settled, rss_mib(os.getpid()),
                                 sum(rss_mib(pid) for pid in judges)))
                print(f"{settled:>5} settled  session {readings[-1][1]:7.1f} MiB  judges "
                      f"{readings[-1][2]:7.1f} MiB  ({time.perf_counter() - started:.0f} s)",
                      flush=True)
    first, last = readings[0], readings[-1]
    print(f"{args.count} attempts in {time.perf_counter() - started:.0f} s, statuses {statuses}")
    print(f"growth from {first[0]} to {last[0]} settled: session {last[1] - first[1]:+.1f} MiB,"
          f" judges {last[2] - first[2]:+.1f} MiB")


if __name__ == "__main__":
    main()
