"""Write what a run measured per problem into the suite's costs file (problems/costs.yaml), the
figures a first run orders its cases by and paces its estimate of the end with.

    python benchmarks/suite_costs.py REPORT.json --device cpu|cuda [--problems problems]

A case's cost is the span from its first stage taking the device to its last stage letting it
go (what `--kb-costs` reads of a report); a problem's figure is the median over the report's
cases of it. The file keeps the other kind of device's figures and this kind's for problems the
report did not run; a problem the report ran gets the new figure.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

import yaml

from pytest_kernelbench.engine import schedule

HEADER = """\
# What a case of each shipped problem costs, in seconds from its first stage to its last, per
# kind of device: the order and the estimated end of a run that has no earlier report of its
# own. Written by benchmarks/suite_costs.py from a run of the reference set; see
# docs/performance.md for the run each kind's figures come from.
"""


def problem_costs(report: Path) -> dict[str, float]:
    """'level<N>/<id>_<Name>' -> the median seconds of the report's cases of that problem."""
    names = {(r["level"], r["problem_id"]): r["problem"]
             for r in json.loads(report.read_text())["results"]}
    spans: dict[str, list[float]] = defaultdict(list)
    for (_, level, pid, _), seconds in schedule.read_costs(report).items():
        spans[f"level{level}/{pid}_{names[level, pid]}"].append(seconds)
    return {key: round(statistics.median(values), 1) for key, values in spans.items()}


def order(key: str) -> tuple[int, int]:
    level, rest = key.removeprefix("level").split("/", 1)
    return int(level), int(rest.split("_", 1)[0])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path)
    parser.add_argument("--device", choices=("cpu", "cuda"), required=True)
    parser.add_argument("--problems", type=Path, default=Path("problems"))
    args = parser.parse_args()
    path = args.problems / schedule.SUITE_COSTS
    table = (yaml.safe_load(path.read_text()) or {}) if path.is_file() else {}
    kind = {**(table.get(args.device) or {}), **problem_costs(args.report)}
    table[args.device] = {key: kind[key] for key in sorted(kind, key=order)}
    path.write_text(HEADER + yaml.safe_dump(table, sort_keys=False))
    schedule.suite_costs(args.problems, args.device)  # reads back as a run will
    print(f"{path}: {len(table[args.device])} problems for {args.device}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
