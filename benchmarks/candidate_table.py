"""The table of docs/candidates.md from one report that judged several sets on the same problems.

  python benchmarks/candidate_table.py REPORT.json --set handwritten --against torch_compile

One Markdown row per candidate of --set: its status, speedup over eager, speedup over the
--against set's candidate for the same problem (both timed against the same eager baseline in
the same run, so the ratio of their speedups), and the fraction of the device's speed of light
it reached; then fast_1 and the geometric mean speedup of each set, over the problems --set has
candidates for.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path

from pytest_kernelbench.building import builds

CORRECT = ("passed", "slower")


def kind(path: str | None) -> str:
    source = Path(path).read_text(errors="replace") if path and Path(path).is_file() else ""
    if builds.needs_build(source):
        return "CUDA"
    return "Triton" if re.search(r"@triton\.jit", source) else "PyTorch"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("report", type=Path)
    parser.add_argument("--set", dest="ours", default="handwritten")
    parser.add_argument("--against", default="torch_compile")
    args = parser.parse_args()
    records = json.loads(args.report.read_text())["results"]
    by_set: dict[str, dict[tuple, dict]] = {}
    for record in records:
        if record.get("status") != "missing":
            by_set.setdefault(record["candidate_set"], {})[
                (record["level"], record["problem_id"])] = record
    ours, against = by_set.get(args.ours, {}), by_set.get(args.against, {})
    ceilings = next(((r.get("speed_of_light") or {}).get("ceilings") for r in ours.values()
                     if r.get("speed_of_light")), None)
    if ceilings:
        print(f"Speed of light against {ceilings['flops_per_s'] / 1e12:.1f} TFLOP/s and "
              f"{ceilings['bytes_per_s'] / 1e12:.2f} TB/s, as measured in the run.\n")
    print(f"| problem | kernel | status | speedup over eager | over {args.against} | "
          "speed of light |")
    print("| --- | --- | --- | ---: | ---: | ---: |")
    for key in sorted(ours):
        mine, theirs = ours[key], against.get(key)
        light = (mine.get("speed_of_light") or {}).get("candidate_fraction")
        ratio = None
        if mine.get("speedup") and theirs and theirs.get("speedup") \
                and theirs.get("status") in CORRECT:
            ratio = mine["speedup"] / theirs["speedup"]
        print(f"| L{key[0]}/{key[1]} {mine['problem']} | {kind(mine.get('candidate_path'))} | "
              f"{mine['status'] or 'not judged (run stopped)'} | {_x(mine.get('speedup'))} | "
              f"{_against(theirs, ratio)} | "
              f"{'-' if light is None else f'{light:.0%}'} |")
    print()
    for name, chosen in ((args.ours, ours), (args.against, against)):
        rows = [chosen.get(key) for key in ours]
        fast = sum(1 for r in rows if r and r.get("status") in CORRECT and (r.get("speedup") or 0) > 1)
        speeds = [r["speedup"] for r in rows if r and r.get("status") in CORRECT and r.get("speedup")]
        geomean = math.exp(sum(map(math.log, speeds)) / len(speeds)) if speeds else None
        print(f"{name}: fast_1 {fast}/{len(ours)} = {fast / max(len(ours), 1):.2f}, geomean "
              f"speedup {_x(geomean)} over {len(speeds)} correct")
    return 0


def _against(theirs: dict | None, ratio: float | None) -> str:
    if theirs is None:
        return "not run"
    return _x(ratio) if theirs.get("status") in CORRECT else "not judged"


def _x(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


if __name__ == "__main__":
    sys.exit(main())
