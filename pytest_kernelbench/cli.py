"""`kernelbench-report`: read, merge and summarise the plugin's reports without running pytest.

    kernelbench-report summary REPORT [REPORT ...] [--p 1,2] [--fail-under fast_1=0.4]
    kernelbench-report merge -o MERGED.json REPORT [REPORT ...]
    kernelbench-report compare BEFORE AFTER [--fail-on-regression]
    kernelbench-report plot -o DIR REPORT [REPORT ...]

A REPORT is a JSON report (`--kb-report`) or the JSON-lines stream a run writes beside it as
records settle (`.jsonl`, all that is left of a run that died), or upstream KernelBench's own
`eval_results.json` (with `--upstream-level N` and, for speedups, `--upstream-baseline FILE`).
`merge` joins the reports of the shards of one run (`--kb-shard=I/N`) into one report with the
same summary an unsharded run gives; it refuses reports made with other verdict settings, or
that disagree on a case.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from pytest_kernelbench import faults, report, resume, scoring, upstream, upstream_results


class MergeError(Exception):
    pass


@dataclass(frozen=True)
class UpstreamFiles:
    """How to read upstream KernelBench's eval_results.json files (upstream_results.py)."""

    level: int | None = None
    baseline: Path | None = None
    p: float = 1.0
    rules: str = "main"  # the upstream version whose scripts wrote them


def load(path: Path, files: UpstreamFiles = UpstreamFiles()) -> tuple[dict, list[dict]]:
    """(the report without its records, or {} for a stream; the records). Upstream's own
    eval_results.json is read as records too."""
    read = resume.read_records  # its errors name the file
    if path.suffix == ".jsonl":
        return {}, read(path)
    try:
        document = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}, read(path)  # raises, saying what is wrong with which file
    if upstream_results.is_eval_results(document):
        return {"config": {"p": files.p}}, _upstream_records(path, document, files)
    return {key: value for key, value in document.items() if key != "results"}, read(path)


def _upstream_records(path: Path, document: dict, files: UpstreamFiles) -> list[dict]:
    if files.level is None:
        raise ValueError(f"{path} is upstream KernelBench's eval_results.json, which does not say "
                         "its level: give --upstream-level")
    baseline = None
    if files.baseline is not None:
        try:
            baseline = json.loads(files.baseline.read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise ValueError(f"--upstream-baseline {files.baseline}: {exc}") from None
    try:
        return upstream_results.records_from_eval_results(
            document, files.level, upstream_results.set_name_for(path), baseline, files.p,
            files.rules)
    except upstream_results.UpstreamResultsError as exc:
        raise ValueError(f"--upstream-baseline {files.baseline}: {exc}") from None


def merge(paths: list[Path], files: UpstreamFiles = UpstreamFiles()) -> dict:
    """One report from several shards' reports (see the module docstring)."""
    head: dict = {}
    by_key: dict[tuple, tuple[Path, dict]] = {}
    settings: dict[str, Path] = {}
    builds: list = []
    for path in paths:
        document, records = load(path, files)
        head = head or document
        builds += document.get("builds") or []
        for record in records:
            key = resume.record_key(record)
            made_with = (record.get("fingerprint") or {}).get("settings")
            if made_with is not None:
                settings.setdefault(made_with, path)
            if record.get("status") == faults.NOT_RUN and key in by_key:
                continue  # a partial run's placeholder: any record of the case says more
            if key in by_key and by_key[key][1].get("status") == faults.NOT_RUN:
                del by_key[key]
            if key in by_key and _verdict(by_key[key][1]) != _verdict(record):
                raise MergeError(f"{by_key[key][0]} and {path} disagree on {_name(key)}: "
                                 f"{_verdict(by_key[key][1])} against {_verdict(record)}")
            by_key.setdefault(key, (path, record))
    if len(settings) > 1:
        first, second = list(settings.values())[:2]
        raise MergeError(f"{first} and {second} were made with different verdict settings "
                         "(p, trials, tolerances, timing, ...): their records do not add up")
    records = [record for _, record in by_key.values()]
    config = dict(head.get("config") or {})
    config.pop("shard", None)
    p = float(config.get("p", 1.0))
    ps = report.summary_ps(p)
    return {
        "schema_version": report.SCHEMA_VERSION,
        **report.completion_of(records),
        "environment": head.get("environment") or {},
        "config": config,
        "summary": report.summary_rows(scoring.summarize(records, ps, p)),
        "summary_upstream": report.summary_rows(scoring.summarize(
            [upstream.as_upstream_record(r) for r in records], ps, p)),
        "results": sorted(records, key=lambda r: (r["candidate_set"], r["level"],
                                                   r["problem_id"], r["sample"])),
        "builds": builds,
        "merged_from": [str(path) for path in paths],
    }


def _verdict(record: dict) -> tuple:
    return (record.get("status"), record.get("fingerprint"))


def _name(key: tuple) -> str:
    set_name, level, problem_id, sample = key
    return f"{set_name} level{level}/{problem_id} {sample}"


def parse_floor(text: str) -> tuple[str, float]:
    """'fast_1=0.4' -> ('fast_1', 0.4): a summary column and the least value it may have."""
    name, equals, value = text.partition("=")
    try:
        return name.strip(), float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE such as fast_1=0.4, got {text!r}") \
            from None


def below_floors(rows: list[dict], floors: list[tuple[str, float]]) -> list[str]:
    """The summary figures under their floors, in words ('r1 level 1: fast_1 0.300 < 0.4')."""
    missing = [name for name, _ in floors if rows and name not in rows[0]]
    if missing:
        raise ValueError(f"no column {', '.join(missing)} in the summary "
                         f"(there are: {', '.join(k for k in rows[0] if k.startswith('fast_'))})")
    return [f"{row['candidate_set']} level {row['level']}: {name} {row[name]:.3f} < {floor:g}"
            for row in rows for name, floor in floors
            if row[name] is not None and row[name] < floor]


def compare(before: list[dict], after: list[dict], threshold: float = 0.05) -> tuple[list[str], bool]:
    """Lines on what changed between two runs of the same cases, and whether anything that was
    correct no longer is (a regression): first every status change (a verdict that flipped, or
    a correct case now read `passed` rather than `slower`), then the speedups of the cases whose
    status held that moved by more than threshold (relative)."""
    old = {resume.record_key(r): r for r in before}
    statuses, speedups, regressed = [], [], False
    for record in sorted(after, key=resume.record_key):
        key = resume.record_key(record)
        if key not in old:
            continue
        was, now = old[key], record
        moved = _speedup_change(was, now)
        if was.get("status") != now.get("status"):
            regressed |= bool(was.get("correct")) and not now.get("correct")
            statuses.append(f"{_name(key)}: {_status_change(was, now)}")
        elif moved is not None and abs(moved) > threshold:
            speedups.append(f"{_name(key)}: speedup {was['speedup']:.3f} -> "
                            f"{now['speedup']:.3f} ({moved:+.1%})")
    return statuses + speedups, regressed


def _speedup_change(was: dict, now: dict) -> float | None:
    if was.get("speedup") and now.get("speedup"):
        return now["speedup"] / was["speedup"] - 1
    return None


def _status_change(was: dict, now: dict) -> str:
    """'now fails (passed -> mismatch: ...)', 'now passes (...)' or, where the case stayed
    correct or stayed wrong, 'slower -> passed (speedup 0.980 -> 1.040)'."""
    change = f"{was.get('status')} -> {now.get('status')}"
    if bool(was.get("correct")) != bool(now.get("correct")):
        what = "now fails" if was.get("correct") else "now passes"
        return f"{what} ({change}" + (f": {now['error']}" if now.get("error") else "") + ")"
    if _speedup_change(was, now) is not None:
        return f"{change} (speedup {was['speedup']:.3f} -> {now['speedup']:.3f})"
    return change + (f" ({now['error']})" if now.get("error") else "")


def parse_ps(text: str) -> list[float]:
    try:
        return sorted({float(part) for part in text.split(",") if part.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected numbers such as 1,2, got {text!r}") from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kernelbench-report", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    summary = commands.add_parser("summary", help="print fast_p tables of one or more reports")
    summary.add_argument("reports", nargs="+", type=Path)
    summary.add_argument("--p", type=parse_ps, default=None, metavar="P[,P]",
                         help="speedup thresholds (default: 0, 1 and the run's p)")
    summary.add_argument("--fail-under", type=parse_floor, action="append", default=[],
                         metavar="NAME=VALUE",
                         help="exit 1 when a summary figure of any set and level is below VALUE, "
                         "e.g. fast_1=0.4 (repeatable)")
    against = commands.add_parser("compare", help="what changed between two runs")
    against.add_argument("before", type=Path)
    against.add_argument("after", type=Path)
    against.add_argument("--threshold", type=float, default=0.05,
                         help="report speedups that moved by more than this fraction "
                         "(default: 0.05)")
    against.add_argument("--fail-on-regression", action="store_true",
                         help="exit 1 when a case that was correct no longer is")
    joined = commands.add_parser("merge", help="merge the reports of a run's shards")
    joined.add_argument("reports", nargs="+", type=Path)
    joined.add_argument("-o", "--output", type=Path, required=True)
    drawn = commands.add_parser("plot", help="PNG plots of one or more reports (needs matplotlib)")
    drawn.add_argument("reports", nargs="+", type=Path)
    drawn.add_argument("-o", "--output", type=Path, required=True, help="folder for the PNGs")
    for command in (summary, against, joined, drawn):
        command.add_argument("--upstream-level", type=int, default=None, metavar="N",
                             help="the level of upstream KernelBench eval_results.json files "
                             "given as reports")
        command.add_argument("--upstream-baseline", type=Path, default=None, metavar="FILE",
                             help="upstream's eager timing file (results/timing/<hardware>/"
                             "baseline_time_torch.json), for those files' speedups")
        command.add_argument("--upstream-p", type=float, default=1.0, metavar="P",
                             help="p for those files' passed/slower (default: 1)")
        command.add_argument("--upstream-version", choices=("v0", "main"), default="main",
                             help="the upstream version that wrote those files (default: main)")
    args = parser.parse_args(argv)
    files = UpstreamFiles(args.upstream_level, args.upstream_baseline, args.upstream_p,
                          args.upstream_version)
    if args.command == "compare":
        try:
            lines, regressed = compare(load(args.before, files)[1], load(args.after, files)[1],
                                       args.threshold)
        except (resume.ResumeError, OSError, ValueError) as exc:
            print(f"kernelbench-report: {exc}", file=sys.stderr)
            return 2
        print("\n".join(lines) if lines else "no status changed, no speedup moved by more "
              f"than {args.threshold:.0%}")
        return 1 if regressed and args.fail_on_regression else 0
    try:
        merged = merge(args.reports, files)
    except (MergeError, resume.ResumeError, OSError, ValueError) as exc:
        print(f"kernelbench-report: {exc}", file=sys.stderr)
        return 2
    if args.command == "plot":
        from pytest_kernelbench import plots

        try:
            written = plots.write_plots(merged["results"], float(merged["config"].get("p", 1.0)),
                                        args.output)
        except plots.PlotError as exc:
            print(f"kernelbench-report: {exc}", file=sys.stderr)
            return 2
        print("\n".join(str(path) for path in written))
        return 0
    if args.command == "merge":
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(report.dump_json(merged))
        print(f"{len(merged['results'])} records from {len(args.reports)} report(s): {args.output}")
        return 0
    p = float(merged["config"].get("p", 1.0))
    ps = args.p if args.p is not None else report.summary_ps(p)
    records = merged["results"]
    rows = scoring.summarize(records, ps, p)
    print(report.render_table(rows, p, ps))
    for line in report.at_k_lines(rows, p):
        print(line)
    try:
        low = below_floors(report.summary_rows(rows), args.fail_under)
    except ValueError as exc:
        print(f"kernelbench-report: --fail-under: {exc}", file=sys.stderr)
        return 2
    for line in low:
        print(f"below the floor: {line}")
    return 1 if low else 0


if __name__ == "__main__":
    sys.exit(main())
