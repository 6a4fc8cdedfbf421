"""One candidate set judged twice on the same machine, one after the other: by `pytest` (with
the given arguments, e.g. `-n 8`) and through `Session.evaluate_many`. Prints both walls, their
ratio (the target: the API within 1.15x of pytest) and every case whose status differs, with
the differences between passed, slower and inconclusive (speed-border cases) counted apart.

    python benchmarks/api_vs_pytest.py --problems DIR --candidates DIR [--device cuda]
        [--judges N] [--out FILE.json] [PYTEST ARGS...]

Both sides get an empty build cache of their own. pass/fail is compared as the fast_p tables
count it: correct or not.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pytest_kernelbench import Session
from pytest_kernelbench.suite import discovery

SPEED_BORDER = {"passed", "slower", "inconclusive"}


def pytest_side(problems: Path, candidates: Path, device: str, cache: Path, report: Path,
                args: list[str]) -> tuple[float, dict[tuple, dict]]:
    command = [sys.executable, "-m", "pytest", f"--kb-problems={problems}",
               f"--kb-candidates={candidates}", f"--kb-device={device}",
               f"--kb-build-cache={cache}", f"--kb-report={report}", "--kb-costs=none", "-q",
               "-p", "no:cacheprovider", *args]
    started = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - started
    records = json.loads(report.read_text())["results"]
    return wall, {(r["level"], r["problem_id"], r["sample"]): r for r in records
                  if r["status"] != "missing"}


def api_side(problems: Path, candidates: Path, device: str, cache: Path, judges: int | None
             ) -> tuple[float, dict[tuple, dict]]:
    found = discovery.pair(discovery.find_problems(problems, (1, 2, 3)),
                           {candidates.name: discovery.find_candidates(candidates)})
    cases = [case for case in found if case.candidate is not None]
    started = time.perf_counter()
    records = {}
    with Session(device=device, judges=judges, build_cache=cache) as session:
        pairs = [(case.problem.path, case.candidate.path) for case in cases]  # type: ignore[union-attr]
        for index, record in session.evaluate_many(pairs):
            case = cases[index]
            records[(case.problem.level, case.problem.problem_id, case.sample)] = record
    return time.perf_counter() - started, records


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=Path, required=True)
    parser.add_argument("--candidates", type=Path, required=True)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--judges", type=int)
    parser.add_argument("--out", type=Path)
    args, pytest_args = parser.parse_known_args()
    scratch = Path(tempfile.mkdtemp(prefix="kb-api-vs-pytest-"))
    pytest_s, by_pytest = pytest_side(args.problems.resolve(), args.candidates.resolve(),
                                      args.device, scratch / "cache-pytest",
                                      scratch / "report.json", pytest_args)
    api_s, by_api = api_side(args.problems.resolve(), args.candidates.resolve(), args.device,
                             scratch / "cache-api", args.judges)
    differ, border, fail = [], [], []
    for key in sorted(set(by_pytest) | set(by_api)):
        ours, theirs = by_api.get(key, {}), by_pytest.get(key, {})
        a, b = ours.get("status"), theirs.get("status")
        if ours.get("correct") != theirs.get("correct"):
            fail.append(key)
        if a == b:
            continue
        row = {"case": "L{}/{}/{}".format(*key), "api": a, "pytest": b,
               "api_speedup": ours.get("speedup"), "pytest_speedup": theirs.get("speedup")}
        (border if {a, b} <= SPEED_BORDER else differ).append(row)
    print(f"{len(by_api)} cases; pytest {pytest_s:.1f} s ({' '.join(pytest_args) or 'no args'}),"
          f" evaluate_many {api_s:.1f} s: ratio {api_s / pytest_s:.2f} (target <= 1.15)")
    print(f"statuses equal: {len(by_api) - len(differ) - len(border)}; speed-border moves: "
          f"{len(border)}; other differences: {len(differ)} ({len(fail)} of them correct on one "
          "side only)")
    for row in differ + border:
        print(f"  {row['case']}: api {row['api']} ({row['api_speedup']}), pytest "
              f"{row['pytest']} ({row['pytest_speedup']})")
    if args.out:
        args.out.write_text(json.dumps({"pytest_s": pytest_s, "api_s": api_s, "differ": differ,
                                        "border": border}, indent=1))
    return 1 if fail else 0


if __name__ == "__main__":
    sys.exit(main())
