"""Check the confinement of candidates on this machine (CPU or GPU).

    python benchmarks/confine_check.py escapes OUTDIR [--device cuda]
    python benchmarks/confine_check.py compare CONFINED.json UNCONFINED.json

escapes: runs the escape candidates (tests/examples/candidates/escapes: write a problem file,
the plugin's source, another candidate's build, the report, a file in $HOME; read another
candidate; connect to a local port; signal the pytest process) beside an honest one, on a copy
of the example problems, and checks that each got status sandbox_violation, that the honest one
passed, and that nothing they aimed at changed or was reached.
compare: the same candidates run confined and unconfined must get the same verdicts; prints the
speedup differences (confinement should cost nothing once a worker runs).
Exit status 1 when a check fails.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import pwd
import shutil
import socket
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "tests" / "examples"
HOME_MARKER = Path(pwd.getpwuid(os.getuid()).pw_dir) / ".kb-escape-marker"  # the real home

sys.path.insert(0, str(ROOT / "benchmarks"))
from expected_verdicts import false_verdicts  # noqa: E402


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def escapes(out: Path, device: str) -> int:
    out.mkdir(parents=True, exist_ok=True)
    problems = out / "problems"
    shutil.rmtree(problems, ignore_errors=True)
    shutil.copytree(EXAMPLES / "problems", problems)
    watched = {path: digest(path) for path in problems.rglob("*.py")}
    plugin = ROOT / "pytest_kernelbench" / "scoring.py"
    plugin_mtime = plugin.stat().st_mtime_ns
    report = out / "escapes.json"
    builds = out / "builds"
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    env = {**os.environ, "KB_ESCAPE_REPORT": str(report),
           "KB_ESCAPE_PORT": str(listener.getsockname()[1])}
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
               f"--kb-problems={problems}", f"--kb-candidates={EXAMPLES / 'candidates' / 'escapes'}",
               f"--kb-device={device}", "--kb-level=1", "--kb-trials=1", "--kb-p=0",
               f"--kb-build-cache={builds}", f"--kb-report={report}",
               "--benchmark-max-time=0.01"]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    (out / "escapes.log").write_text(done.stdout + done.stderr)
    checks: dict[str, bool] = {"pytest was not killed": done.returncode >= 0}
    written = json.loads(report.read_text()) if report.exists() else {}
    print(f"confinement: {written.get('environment', {}).get('confinement')}; "
          f"{done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ''}")
    records = written.get("results", [])
    for record in records:
        if record["problem_id"] == 2:
            print(f"  {record['sample']:<24} {record['status']:<18} {record.get('error') or ''}")
    wrong = false_verdicts([r for r in records if r["problem_id"] == 2])
    checks["every escape sandbox_violation, the honest one passed"] = \
        bool(records) and not wrong
    checks["problem files unchanged"] = all(digest(p) == d for p, d in watched.items())
    checks["plugin source untouched"] = plugin.stat().st_mtime_ns == plugin_mtime
    checks["no library planted in the build cache"] = not list(builds.glob("*/planted.so"))
    checks["nothing written in $HOME"] = not HOME_MARKER.exists()
    try:
        listener.accept()
        checks["no connection reached the harness's port"] = False
    except BlockingIOError:
        checks["no connection reached the harness's port"] = True
    for line in wrong:
        print(f"  FALSE VERDICT {line}")
    for name, ok in checks.items():
        print(f"{'ok  ' if ok else 'FAIL'} {name}")
    HOME_MARKER.unlink(missing_ok=True)
    return 0 if all(checks.values()) else 1


def compare(confined_path: str, open_path: str) -> int:
    def load(path: str) -> dict[tuple, dict]:
        return {(r["candidate_set"], r["level"], r["problem_id"], r["sample"]): r
                for r in json.loads(Path(path).read_text())["results"]}

    confined, unconfined = load(confined_path), load(open_path)
    differ = [key for key in confined.keys() & unconfined.keys()
              if confined[key]["status"] != unconfined[key]["status"]]
    for key in sorted(differ):
        print(f"  DIFFERENT {'/'.join(map(str, key))}: confined {confined[key]['status']} "
              f"({confined[key].get('error')}), unconfined {unconfined[key]['status']}")
    ratios = [confined[k]["speedup"] / unconfined[k]["speedup"]
              for k in confined.keys() & unconfined.keys()
              if confined[k].get("speedup") and unconfined[k].get("speedup")]
    states = sorted({r.get("confinement") or "-" for r in confined.values()})
    print(f"{len(confined.keys() & unconfined.keys())} records in both, {len(differ)} verdicts "
          f"differ; confined records: {'; '.join(states)}")
    if ratios:
        spread = sorted(abs(r - 1) for r in ratios)
        print(f"speedup confined/unconfined over {len(ratios)}: median "
              f"{statistics.median(ratios):.4f}, p95 |diff| "
              f"{spread[min(len(spread) - 1, round(0.95 * (len(spread) - 1)))]:.2%}")
    walls = [(sum((confined[k].get("harness_s") or {}).values()),
              sum((unconfined[k].get("harness_s") or {}).values()))
             for k in confined.keys() & unconfined.keys()]
    print(f"harness seconds in workers: confined {sum(w[0] for w in walls):.1f}, "
          f"unconfined {sum(w[1] for w in walls):.1f}")
    return 1 if differ else 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("escapes")
    run.add_argument("out", type=Path)
    run.add_argument("--device", default="cpu")
    both = commands.add_parser("compare")
    both.add_argument("confined")
    both.add_argument("unconfined")
    args = parser.parse_args(argv)
    if args.command == "escapes":
        return escapes(args.out, args.device)
    return compare(args.confined, args.unconfined)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
