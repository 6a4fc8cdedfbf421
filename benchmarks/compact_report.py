"""A run's JSON report cut down to what the repository keeps of it: one verdict per case.

  python benchmarks/compact_report.py REPORT.json... -o OUT.json [--md OUT.md] [--title TEXT]
        [--commit SHA]

A full report holds tracebacks, compiler output and every timing statistic; docs/runs keeps
only what a later run is compared against. Each record keeps its case (set, level, problem id,
problem, sample), its status, speedup and both median times, the `held` windows per stage
(what `--kb-costs` and the device-overlap checks read; as seconds after the run's first hold),
its placement, the first line of its error, upstream's verdict and the speed-of-light
fractions. The result is still a report in form (`{"results": [...]}`), so compare_runs.py,
expected_verdicts.py, agreement.py, multi_gpu_check.py, candidate_table.py and `--kb-costs`
read it as they read a full one. With several reports, a later report's record of a case
replaces an earlier one's (a resumed or re-run part). --md writes the same records as a
Markdown table: problem, candidate, status, speedup (3 significant digits) and upstream's verdict.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

KEPT_ENVIRONMENT = ("gpu", "driver", "torch", "cuda", "python")
ERROR_CHARS = 240


def significant(value: float | None, digits: int) -> float | None:
    return None if value is None else float(f"{value:.{digits}g}")


def repository_path(path: str | None) -> str | None:
    """A candidate's path from the repository root (`candidates/...`, `.third_party/...`), so
    expected_verdicts.py finds the file's declared verdict on another machine."""
    if not path:
        return path
    for root in ("candidates/", ".third_party/"):
        if root in path:
            return root + path.split(root, 1)[1]
    return path


def first_line(text: str | None) -> str | None:
    if not text:
        return None
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line[:ERROR_CHARS] or None


def upstream_verdict(record: dict) -> dict | None:
    upstream = record.get("upstream")
    if not upstream:
        return None
    return {"compiled": upstream.get("compiled"), "correct": upstream.get("correct"),
            "speedup": significant(upstream.get("speedup"), 6)}


def light_fractions(record: dict) -> dict | None:
    """The speed-of-light fractions and the ceilings they were read against (candidate_table.py)."""
    light = record.get("speed_of_light")
    if not light:
        return None
    return {"ceilings": light.get("ceilings"),
            "baseline_fraction": significant(light.get("baseline_fraction"), 4),
            "candidate_fraction": significant(light.get("candidate_fraction"), 4)}


def compact_record(record: dict, epoch: float) -> dict:
    placement = record.get("placement") or {}
    return {
        "candidate_set": record["candidate_set"], "level": record["level"],
        "problem_id": record["problem_id"], "problem": record["problem"],
        "sample": record["sample"], "candidate_path": repository_path(record.get("candidate_path")),
        "status": record["status"], "speedup": significant(record.get("speedup"), 6),
        "baseline_time": significant(record.get("baseline_time"), 4),
        "candidate_time": significant(record.get("candidate_time"), 4),
        "held": {stage: [round(edge - epoch, 3) for edge in window]
                 for stage, window in (record.get("held") or {}).items()},
        "placement": {key: placement[key] for key in ("worker", "device", "gpu_uuid", "worker_gpu_uuid")
                      if key in placement},
        "error": first_line(record.get("error")),
        "upstream": upstream_verdict(record),
        "speed_of_light": light_fractions(record),
    }


def case_key(record: dict) -> tuple:
    return (record["candidate_set"], str(record["level"]), str(record["problem_id"]),
            record["sample"])


def run_start(records: list[dict]) -> float:
    """The earliest hold of a report: its `held` windows are kept as seconds after it (the
    durations and overlaps that scripts read are the same, the numbers shorter)."""
    starts = [window[0] for r in records for window in (r.get("held") or {}).values() if window]
    return min(starts, default=0.0)


def merged_records(paths: list[str]) -> list[dict]:
    by_case: dict[tuple, dict] = {}
    for path in paths:
        records = json.loads(Path(path).read_text())["results"]
        epoch = run_start(records)
        for record in records:
            by_case[case_key(record)] = compact_record(record, epoch)
    return sorted(by_case.values(), key=lambda r: (r["candidate_set"], int(r["level"]),
                                                    int(r["problem_id"]), r["sample"]))


def upstream_words(verdict: dict | None) -> str:
    if verdict is None:
        return ""
    if not verdict.get("compiled"):
        return "not compiled"
    if verdict.get("correct") is None:
        return "unknown"
    if not verdict["correct"]:
        return "incorrect"
    speedup = verdict.get("speedup")
    return f"correct, {speedup:.3g}x" if speedup else "correct"


def markdown(records: list[dict], title: str) -> str:
    with_upstream = any(r["upstream"] for r in records)
    header = "| problem | candidate | status | speedup |" + (" upstream's rules |" if with_upstream else "")
    rule = "|---|---|---|---|" + ("---|" if with_upstream else "")
    lines = [f"# {title}", "", header, rule]
    for r in records:
        speedup = f"{r['speedup']:.3g}" if r["speedup"] else ""
        row = (f"| L{r['level']}/{r['problem_id']} {r['problem']} | {r['candidate_set']}/{r['sample']} "
               f"| {r['status']} | {speedup} |")
        if with_upstream:
            row += f" {upstream_words(r['upstream'])} |"
        lines.append(row)
    return "\n".join(lines) + "\n"


def one_record_a_line(compact: dict) -> str:
    """JSON with each record on a line of its own: small, and a diff shows which cases moved."""
    head = json.dumps({k: v for k, v in compact.items() if k != "results"})[:-1]
    rows = ",\n".join(json.dumps(r, separators=(",", ":")) for r in compact["results"])
    return f'{head}, "results": [\n{rows}\n]}}\n'


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="+")
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--md")
    parser.add_argument("--title", default="Verdicts")
    parser.add_argument("--commit", help="the commit the run ran at, kept in the file")
    args = parser.parse_args(argv)
    records = merged_records(args.reports)
    environment = json.loads(Path(args.reports[-1]).read_text()).get("environment") or {}
    compact = {"commit": args.commit,
               "environment": {key: environment[key] for key in KEPT_ENVIRONMENT if key in environment},
               "results": records}
    Path(args.output).write_text(one_record_a_line(compact))
    if args.md:
        Path(args.md).write_text(markdown(records, args.title))
    print(f"{args.output}: {len(records)} records")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
