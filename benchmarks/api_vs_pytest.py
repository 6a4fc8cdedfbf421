"""One candidate set judged twice on the same machine, one after the other: by `pytest` (with
the given arguments, e.g. `-n 8`) and through `Session.evaluate_many`. Prints both walls, their
ratio (the target: the API within 1.15x of pytest) and every case whose status differs, with
the differences between passed, slower and inconclusive (speed-border cases) counted apart;
--compare also sets each part of a worker's load and of the correctness stage side by side over
the cases that build nothing (in all, and by the stretch of the run each began in), and the
builds ahead, where both sides' full records are beside their files.

    python benchmarks/api_vs_pytest.py --problems DIR --candidates DIR [--device cuda]
        [--judges N] [--out FILE.json] [--side pytest|api] [--limit S] [PYTEST ARGS...]
    python benchmarks/api_vs_pytest.py --compare PYTEST.json API.json
    python benchmarks/api_vs_pytest.py --side api --cluster ray --out CLUSTER.json ...
    python benchmarks/api_vs_pytest.py --compare API.json CLUSTER.json  (target: 1.2x)

A side alone (--side) is saved to --out (beside it, OUT.report.json: the pytest side's report,
or the API side's records in a report's form), for a machine whose commands are limited in
time: run each, then compare them.

Both sides get an empty build cache of their own. pass/fail is compared as the fast_p tables
count it: correct or not.
"""

from __future__ import annotations

import argparse
import json
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pytest_kernelbench import Session
from pytest_kernelbench.suite import discovery

SPEED_BORDER = {"passed", "slower", "inconclusive"}
STALL_S = 3.0  # a part of one case this long stood still, or waited
WINDOW_S = 30.0  # the stretch of a run that --compare sums the parts of its cases over
WINDOW_PARTS = ("libraries", "start_confine", "import", "trials")  # of those parts, these


def pytest_side(problems: Path, candidates: Path, device: str, cache: Path, report: Path,
                args: list[str], limit_s: float | None) -> tuple[float, dict[tuple, dict]]:
    command = [sys.executable, "-m", "pytest", f"--kb-problems={problems}",
               f"--kb-candidates={candidates}", f"--kb-device={device}",
               f"--kb-build-cache={cache}", f"--kb-report={report}", "--kb-costs=none", "-q",
               "-p", "no:cacheprovider", *args]
    started = time.perf_counter()
    run = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    try:
        run.wait(timeout=limit_s)
    except subprocess.TimeoutExpired:  # as Ctrl-C stops it: the cases judged so far reported
        run.send_signal(signal.SIGINT)
        run.wait()
    wall = time.perf_counter() - started
    records = json.loads(report.read_text())["results"]
    return wall, {(r["level"], r["problem_id"], r["sample"]): r for r in records
                  if r["status"] != "missing"}


def api_side(problems: Path, candidates: Path, device: str, cache: Path, judges: int | None,
             limit_s: float | None, cluster: str | None = None) -> tuple[float, dict[tuple, dict]]:
    found = discovery.pair(discovery.find_problems(problems, (1, 2, 3)),
                           {candidates.name: discovery.find_candidates(candidates)})
    cases = [case for case in found if case.candidate is not None]
    started = time.perf_counter()
    records = {}
    with Session(device=device, judges=judges, build_cache=cache, cluster=cluster) as session:
        pairs = [(case.problem.path, case.candidate.path) for case in cases]  # type: ignore[union-attr]
        for index, record in session.evaluate_many(pairs):
            case = cases[index]
            records[(case.problem.level, case.problem.problem_id, case.sample)] = record
            if limit_s is not None and time.perf_counter() - started > limit_s:
                break  # the session closes: what it judged so far is kept
    return time.perf_counter() - started, records


def compare(pytest_s: float, by_pytest: dict, api_s: float, by_api: dict,
            pytest_args: list[str], names: tuple[str, str] = ("pytest", "evaluate_many"),
            target: float = 1.15) -> tuple[list[dict], list[dict], list[tuple]]:
    """Prints both walls and every case whose status differs: (differ, border, fail). names:
    the two faces (the first is the one the second is held to, within target times its wall)."""
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
    print(f"{len(by_api)} cases; {names[0]} {pytest_s:.1f} s ({' '.join(pytest_args) or 'no args'}),"
          f" {names[1]} {api_s:.1f} s: ratio {api_s / pytest_s:.2f} (target <= {target:g})")
    print(f"statuses equal: {len(by_api) - len(differ) - len(border)}; speed-border moves: "
          f"{len(border)}; other differences: {len(differ)} ({len(fail)} of them correct on one "
          "side only)")
    for row in differ + border:
        print(f"  {row['case']}: {names[1]} {row['api']} ({row['api_speedup']}), {names[0]} "
              f"{row['pytest']} ({row['pytest_speedup']})")
    return differ, border, fail


def part_figures(records: dict[tuple, dict]) -> dict[str, dict[tuple, float]]:
    """Each part of a worker's load and of the correctness stage (load_phases, correct_phases):
    its seconds in each case that has it."""
    parts: dict[str, dict[tuple, float]] = {}
    for key, record in records.items():
        for field in ("load_phases", "correct_phases"):
            for part, seconds in (record.get(field) or {}).items():
                if isinstance(seconds, (int, float)):
                    parts.setdefault(part, {})[key] = seconds
    return parts


def parts_by_window(records: dict[tuple, dict]) -> dict[float, dict[str, float]]:
    """WINDOW_PARTS and the seconds each worker stood stopped (harness_s), summed over the
    cases whose first stage took the device in each WINDOW_S of the run (from the first such
    start); `cases` counts them. A stretch where a side's parts run slow (the start of a run,
    its judges and builds starting at once) shows apart from one spread over the run."""
    starts = {key: min(span[0] for span in record["held"].values())
              for key, record in records.items() if record.get("held")}
    if not starts:
        return {}
    first = min(starts.values())
    windows: dict[float, dict[str, float]] = {}
    for key, started in starts.items():
        window = windows.setdefault((started - first) // WINDOW_S * WINDOW_S, {})
        record = records[key]
        parts = {**(record.get("load_phases") or {}), **(record.get("correct_phases") or {}),
                 "stopped": (record.get("harness_s") or {}).get("stopped", 0.0)}
        window["cases"] = window.get("cases", 0) + 1
        for part in (*WINDOW_PARTS, "stopped"):
            window[part] = window.get(part, 0.0) + (parts.get(part) or 0.0)
    return windows


def compare_parts(first: Path, second: Path, names: tuple[str, str]) -> None:
    """Where two sides' time went (their OUT.report.json beside each --out): on the cases that
    build nothing on either, each part summed, the median of second / first per case, the
    longest and how many took over STALL_S; and each side's builds ahead, by outcome."""
    reports = [path.with_suffix(".report.json") for path in (first, second)]
    if not all(report.is_file() for report in reports):
        return
    sides = [{(r["level"], r["problem_id"], r["sample"]): r
              for r in json.loads(report.read_text())["results"]} for report in reports]
    plain = {key for key in set(sides[0]) & set(sides[1])
             if all(side[key].get("extension") in (None, "none") for side in sides)}
    figures = [part_figures({key: side[key] for key in plain}) for side in sides]
    print(f"parts over the {len(plain)} cases that build nothing, {names[0]} / {names[1]}: "
          f"sum, median ratio per case, longest, cases over {STALL_S:g} s")
    for part in sorted(figures[1], key=lambda p: -sum(figures[1][p].values())):
        a, b = figures[0].get(part, {}), figures[1][part]
        ratios = [b[key] / a[key] for key in a.keys() & b.keys() if a[key] > 0]
        median = f"{statistics.median(ratios):.2f}" if ratios else "-"
        print(f"  {part}: {sum(a.values()):.1f} / {sum(b.values()):.1f} s, {median}, "
              f"{max(a.values(), default=0):.1f} / {max(b.values()):.1f} s, "
              f"{sum(x > STALL_S for x in a.values())} / {sum(y > STALL_S for y in b.values())}")
    windows = [parts_by_window({key: side[key] for key in plain}) for side in sides]
    print(f"the same cases by the {WINDOW_S:g} s of the run their first stage began in, "
          f"{names[0]} / {names[1]}: cases; seconds of " + ", ".join(WINDOW_PARTS)
          + ", stopped behind others' timings")
    for start in sorted(windows[0].keys() | windows[1].keys()):
        a, b = (window.get(start, {}) for window in windows)
        print(f"  {start:4.0f}-{start + WINDOW_S:<4.0f} s: {a.get('cases', 0):.0f} / "
              f"{b.get('cases', 0):.0f}; " + ", ".join(
                  f"{a.get(part, 0):.1f} / {b.get(part, 0):.1f}"
                  for part in (*WINDOW_PARTS, "stopped")))
    for outcome in ("built", "failed"):
        seconds = [[(r.get("prebuild") or {}).get("seconds") for r in side.values()
                    if r.get("extension") == outcome] for side in sides]
        seconds = [[s for s in side if s] for side in seconds]
        if all(seconds):
            print(f"builds ahead, {outcome}: median " + " / ".join(
                f"{statistics.median(side):.1f} s of {len(side)}" for side in seconds))


def save_side(path: Path, wall_s: float, records: dict[tuple, dict], args: list[str],
              face: str) -> None:
    kept = [{"key": list(key), **{field: record.get(field) for field in
                                  ("status", "correct", "speedup", "memory")},
             "memory_flags": [flag for flag in record.get("flags") or [] if "memory" in flag]}
            for key, record in records.items()]
    head = json.dumps({"wall_s": wall_s, "args": args, "face": face})[:-1]
    rows = ",\n".join(json.dumps(row) for row in kept)  # a case a line
    path.write_text(f'{head}, "records": [\n{rows}\n]}}\n')


def load_side(path: Path) -> tuple[float, dict[tuple, dict], list[str], str]:
    side = json.loads(path.read_text())
    face = side.get("face") or ("pytest" if side["args"] else "evaluate_many")
    return side["wall_s"], {tuple(r["key"]): r for r in side["records"]}, side["args"], face


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=Path)
    parser.add_argument("--candidates", type=Path)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--judges", type=int)
    parser.add_argument("--cluster", help="the API side on a Ray cluster ('ray': a local one)")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--side", choices=("pytest", "api", "both"), default="both",
                        help="one side only (a machine's time limit per command), saved to --out")
    parser.add_argument("--limit", type=float, help="seconds a side may run: pytest is stopped "
                        "as by Ctrl-C, the session closed; the cases judged by then are kept")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("PYTEST.json", "API.json"),
                        help="compare two sides saved by --side")
    args, pytest_args = parser.parse_known_args()
    if args.compare:
        pytest_s, by_pytest, pytest_args, first = load_side(args.compare[0])
        api_s, by_api, _, second = load_side(args.compare[1])
        # a Ray cluster is held to the local engine within 1.2x, the API to pytest within 1.15x
        target = 1.2 if second.startswith("evaluate_many on") else 1.15
        fail = compare(pytest_s, by_pytest, api_s, by_api, pytest_args, (first, second),
                       target)[2]
        compare_parts(*args.compare, (first, second))
        return 1 if fail else 0
    if args.problems is None or args.candidates is None:
        parser.error("--problems and --candidates are needed unless --compare is given")
    if args.side != "both" and args.out is None:
        parser.error(f"--side {args.side} needs --out, where the side is saved")
    scratch = Path(tempfile.mkdtemp(prefix="kb-api-vs-pytest-"))
    problems, candidates = args.problems.resolve(), args.candidates.resolve()
    if args.side in ("pytest", "both"):
        report = args.out.with_suffix(".report.json") if args.side == "pytest" \
            else scratch / "report.json"
        pytest_s, by_pytest = pytest_side(problems, candidates, args.device,
                                          scratch / "cache-pytest", report, pytest_args,
                                          args.limit)
        if args.side == "pytest":
            save_side(args.out, pytest_s, by_pytest, pytest_args, "pytest")
            print(f"pytest: {len(by_pytest)} cases in {pytest_s:.1f} s; report {report}")
            return 0
    api_s, by_api = api_side(problems, candidates, args.device, scratch / "cache-api",
                             args.judges, args.limit, args.cluster)
    if args.side == "api":
        face = f"evaluate_many on {args.cluster}" if args.cluster else "evaluate_many"
        save_side(args.out, api_s, by_api, [], face)
        # the records in a report's form, for hold_gaps.py and memory_verdicts.py as pytest's
        report = args.out.with_suffix(".report.json")
        report.write_text(json.dumps({"results": list(by_api.values())}))
        print(f"evaluate_many: {len(by_api)} cases in {api_s:.1f} s; records {report}")
        return 0
    differ, border, fail = compare(pytest_s, by_pytest, api_s, by_api, pytest_args)
    if args.out:
        args.out.write_text(json.dumps({"pytest_s": pytest_s, "api_s": api_s, "differ": differ,
                                        "border": border}, indent=1))
    return 1 if fail else 0


if __name__ == "__main__":
    sys.exit(main())
