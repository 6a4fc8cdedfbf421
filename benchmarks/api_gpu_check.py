"""The batch API on a GPU: declared verdicts through evaluate_many, and one trivial attempt in a
warm session.

    python benchmarks/api_gpu_check.py [--device cuda] [--judges 2] [--out FILE.json]

Judges every candidate of candidates/hostile-gpu and candidates/stream-order for
level1/19_ReLU through `Session.evaluate_many` (faults, cheats and honest orderings, each
declaring its verdict: benchmarks/expected_verdicts.py), printing status against expected; then,
in the same warm session, times `submit(...).result()` of the honest candidate three times
(the target: under 2 s each). Exit status 1 on a false verdict.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from pytest_kernelbench import Session

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from expected_verdicts import expected  # noqa: E402

PROBLEM = ROOT / "problems" / "level1" / "19_ReLU.py"
SETS = [ROOT / "candidates" / "hostile-gpu" / "level1" / "19_ReLU",
        ROOT / "candidates" / "stream-order" / "level1" / "19_ReLU"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--judges", type=int, default=2)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    files = sorted(path for folder in SETS for path in folder.glob("*.py"))
    rows, wrong = [], 0
    started = time.perf_counter()
    with Session(device=args.device, judges=args.judges) as session:
        for index, record in session.evaluate_many((PROBLEM, path) for path in files):
            allowed = expected(str(files[index]))
            ok = record["status"] in allowed
            wrong += not ok
            rows.append({"candidate": f"{files[index].parent.parent.parent.name}/"
                                      f"{files[index].name}",
                         "status": record["status"], "expected": "|".join(sorted(allowed)),
                         "ok": ok, "speedup": record["speedup"]})
        batch_s = time.perf_counter() - started
        honest = SETS[0] / "honest.py"
        warm = []
        for _ in range(3):
            began = time.perf_counter()
            status = session.submit(PROBLEM, honest).result()["status"]
            warm.append((round(time.perf_counter() - began, 2), status))
    for row in rows:
        print(f"{'ok ' if row['ok'] else 'BAD'} {row['candidate']:<40} {row['status']:<18} "
              f"expected {row['expected']}")
    print(f"{len(rows)} candidates through evaluate_many ({args.judges} judges) in {batch_s:.1f} s;"
          f" {wrong} false verdict(s)")
    print(f"one trivial attempt in the warm session: {warm} (seconds, status; target < 2 s)")
    if args.out:
        args.out.write_text(json.dumps({"rows": rows, "batch_s": batch_s, "warm": warm},
                                       indent=1))
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
