"""`kernelbench-report`: read, merge and summarise the plugin's reports without running pytest.

    kernelbench-report summary REPORT [REPORT ...] [--p 1,2] [--fail-under fast_1=0.4]
    kernelbench-report merge -o MERGED.json REPORT [REPORT ...]
    kernelbench-report compare [BEFORE [AFTER]] [--all] [--fail-on-regression]
    kernelbench-report plot -o DIR REPORT [REPORT ...]

A REPORT is a JSON report (`--kb-report`) or the JSON-lines stream a run writes beside it as
records settle (`.jsonl`, all that is left of a run that died), or upstream KernelBench's own
`eval_results.json` (with `--upstream-level N` and, for speedups, `--upstream-baseline FILE`).
`merge` joins the reports of the shards of one run (`--kb-shard=I/N`) into one report with the
same summary an unsharded run gives; it refuses reports made with other verdict settings, or
that disagree on a case. `summary` merges the same way, but reports that are runs of their own
(two runs of one set) are summarised side by side, each row labelled by its file. `compare`
takes runs by their number in the history a run keeps beside its report (history.py), and
says what moved beyond the timing's noise (compare.py); with no run named, the last two.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_kernelbench import faults
from pytest_kernelbench.gpu import timing
from pytest_kernelbench.record import CaseKey, Record
from pytest_kernelbench.reporting import (
    compare,
    history,
    plots,
    report,
    resume,
    scoring,
    upstream_results,
)
from pytest_kernelbench.settings import FIELD_DEFAULTS, REPORT_DEFAULT, parse_p, summary_ps


class MergeError(Exception):
    pass


@dataclass(frozen=True)
class UpstreamFiles:
    """How to read upstream KernelBench's eval_results.json files (upstream_results.py)."""

    level: int | None = None
    baseline: Path | None = None
    p: float = FIELD_DEFAULTS["p"]
    rules: str = "main"  # the upstream version whose scripts wrote them


def load(path: Path, files: UpstreamFiles = UpstreamFiles()) -> tuple[report.Report, list[Record]]:
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


def _upstream_records(path: Path, document: dict[str, Any],
                      files: UpstreamFiles) -> list[Record]:
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


Loaded = tuple[Path, report.Report, list[Record]]  # a report's path, its head and its records


def run_p(head: report.Report) -> float:
    """The p a report's run was made with (the default p where it does not say, as a stream)."""
    return float((head.get("config") or {}).get("p", FIELD_DEFAULTS["p"]))


def run_ps(head: report.Report) -> list[float]:
    """The thresholds a report's run summarised, as its settings resolved them."""
    resolved = (head.get("config") or {}).get("summary_ps")
    return list(resolved) if resolved is not None else list(summary_ps(run_p(head)))


def merge(paths: list[Path], files: UpstreamFiles = UpstreamFiles()) -> report.Report:
    """One report from several shards' reports (see the module docstring)."""
    return merge_loaded([(path, *load(path, files)) for path in paths])


def merge_loaded(loaded: list[Loaded]) -> report.Report:
    """merge, of reports already read."""
    head: report.Report = {}
    by_key: dict[CaseKey, tuple[Path, Record]] = {}
    settings: dict[str, Path] = {}
    builds: list[Any] = []
    paths = [path for path, _, _ in loaded]
    for path, document, records in loaded:
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
                raise MergeError(_disagreement(key, by_key[key], (path, record)))
            by_key.setdefault(key, (path, record))
    if len(settings) > 1:
        first, second = list(settings.values())[:2]
        raise MergeError(f"{first} and {second} were made with different verdict settings "
                         "(p, trials, tolerances, timing, ...): their records do not add up")
    records = [record for _, record in by_key.values()]
    config = dict(head.get("config") or {})
    config.pop("shard", None)
    p, ps = run_p(head), run_ps(head)
    return {
        "schema_version": report.SCHEMA_VERSION,
        **report.completion_of(records),
        "environment": head.get("environment") or {},
        "config": config,
        "summary": report.summary_rows(scoring.summarize(records, ps, p)),
        "summary_upstream": report.summary_rows(scoring.summarize_upstream(records, ps, p)),
        "results": sorted(records, key=lambda r: (r["candidate_set"], r["level"],
                                                   r["problem_id"], r["sample"])),
        "builds": builds,
        "merged_from": [str(path) for path in paths],
    }


def _verdict(record: Record) -> tuple[str | None, dict[str, str] | None]:
    return (record.get("status"), record.get("fingerprint"))


# What each part of a record's fingerprint (resume.fingerprint) is made from.
_FINGERPRINT_PARTS = {"candidate": "candidate files", "problem": "problem files",
                      "settings": "verdict settings"}


def _disagreement(key: CaseKey, first: tuple[Path, Record], second: tuple[Path, Record]) -> str:
    """One line on two reports' records of one case that differ, in words: the two statuses,
    or what the records were made from (never the digests themselves)."""
    (first_path, a), (second_path, b) = first, second
    if a.get("status") != b.get("status"):
        how = f"{a.get('status')} in {first_path.name}, {b.get('status')} in {second_path.name}"
    else:
        prints = [r.get("fingerprint") or {} for r in (a, b)]
        parts = [words for part, words in _FINGERPRINT_PARTS.items()
                 if prints[0].get(part) != prints[1].get(part)]
        how = f"{a.get('status')} in both, from different {' and '.join(parts) or 'runs'}"
    return (f"{first_path} and {second_path} disagree on {compare.name(key)} ({how}): they are two "
            "runs, not shards of one; `compare` lists what changed")


def parse_floor(text: str) -> tuple[str, float]:
    """'fast_1=0.4' -> ('fast_1', 0.4): a summary column and the least value it may have."""
    name, equals, value = text.partition("=")
    try:
        return name.strip(), float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE such as fast_1=0.4, got {text!r}") \
            from None


def below_floors(rows: list[dict[str, Any]], floors: list[tuple[str, float]]) -> list[str]:
    """The summary figures under their floors, in words ('r1 level 1: fast_1 0.300 < 0.4')."""
    missing = [name for name, _ in floors if rows and name not in rows[0]]
    if missing:
        raise ValueError(f"no column {', '.join(missing)} in the summary "
                         f"(there are: {', '.join(k for k in rows[0] if k.startswith('fast_'))})")
    return [f"{row['candidate_set']} level {row['level']}: {name} {row[name]:.3f} < {floor:g}"
            for row in rows for name, floor in floors
            if row[name] is not None and row[name] < floor]


@dataclass(frozen=True)
class Summary:
    """What `summary` prints: lines above the table, its rows and thresholds, lines under it."""

    rows: list[scoring.SetSummary]
    ps: list[float]
    notes: list[str]
    at_k: list[str]
    records: list[Record]


def runs_of_their_own(loaded: list[Loaded]) -> bool:
    """Whether two of the reports hold different records of one case: they are runs of their
    own, not shards of one run. A record both hold alike is one that a resumed run carried
    over; a case one of them never ran (`not_run`) says nothing."""
    seen: dict[CaseKey, str] = {}
    for _, _, records in loaded:
        mine: dict[CaseKey, str] = {}
        for record in records:
            if record.get("status") == faults.NOT_RUN:
                continue
            key = resume.record_key(record)
            mine[key] = json.dumps(record, sort_keys=True, default=str)
            if seen.get(key, mine[key]) != mine[key]:
                return True
        seen.update(mine)
    return False


def side_by_side(loaded: list[Loaded], ps: list[float] | None) -> Summary:
    """Each report summarised on its own, its rows labelled by its file, a set's rows of every
    report next to each other.

    Two runs of the same candidate set are not an error to refuse: comparing them (one run
    against its rerun, before and after a change of machine or driver) is why one passes them
    together, and their rows side by side show how far the runs agree at a glance, where a
    message naming one case that differs would leave the user with nothing to read.
    `compare` lists the cases that differ."""
    names = [path.name for path, _, _ in loaded]
    labels = names if len(set(names)) == len(names) else [str(path) for path, _, _ in loaded]
    ps = ps if ps is not None else sorted({x for _, head, _ in loaded for x in run_ps(head)})
    placed: list[tuple[tuple[str, int, int], scoring.SetSummary]] = []
    at_k: list[str] = []
    records: list[Record] = []
    for index, ((_, head, mine), label) in enumerate(zip(loaded, labels)):
        p = run_p(head)
        labelled: list[Record] = [{**record, "candidate_set": f"{record['candidate_set']} ({label})"}
                    for record in merge_loaded([loaded[index]])["results"]]
        records += labelled
        rows = scoring.summarize(labelled, ps, p)
        at_k += report.at_k_lines(rows, p)
        own_set = {f"{r['candidate_set']} ({label})": r["candidate_set"] for r in mine}
        placed += [((own_set[row.candidate_set], row.level, index), row) for row in rows]
    order = list(dict.fromkeys(where[0] for where, _ in placed))
    placed.sort(key=lambda item: (order.index(item[0][0]), item[0][1], item[0][2]))
    note = (f"{', '.join(labels)}: runs of their own (they differ on a case they share), "
            "summarised side by side, not merged")
    return Summary([row for _, row in placed], ps, [note], at_k, records)


def print_summary(summary: Summary, floors: list[tuple[str, float]]) -> int:
    for line in summary.notes:
        print(line)
    if not summary.rows:  # every case's problem could not be judged: no table to show
        print(f"kernelbench-report: {report.unjudged_line(summary.records)}")
        return 1 if floors else 0
    print(report.render_table(summary.rows, summary.ps))
    for line in report.wrapped(report.unshown_lines(summary.rows, summary.ps)):
        print(line)
    for line in summary.at_k:
        print(line)
    try:
        low = below_floors(report.summary_rows(summary.rows), floors)
    except ValueError as exc:
        print(f"kernelbench-report: --fail-under: {exc}", file=sys.stderr)
        return 2
    for line in low:
        print(f"below the floor: {line}")
    return 1 if low else 0


def parse_ps(text: str) -> list[float]:
    try:
        return sorted({float(part) for part in text.split(",") if part.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected numbers such as 1,2, got {text!r}") from None


def argument_parser() -> argparse.ArgumentParser:
    """The commands of kernelbench-report and their options."""
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
    against = commands.add_parser("compare", help="what moved beyond the timing's noise between "
                                  "two runs (default: the last two of the history)")
    against.add_argument("before", nargs="?", metavar="BEFORE",
                         help="a run: its number in the history, latest, or a report or stream "
                         "(default: the run before the latest)")
    against.add_argument("after", nargs="?", metavar="AFTER",
                         help="a run, named alike (default: the latest)")
    against.add_argument("--history", type=Path, default=Path(REPORT_DEFAULT), metavar="PATH",
                         help="the history that numbers the runs: its folder, or the report that "
                         f"keeps it (default: {REPORT_DEFAULT}, kept in "
                         f"{history.folder_of(Path(REPORT_DEFAULT))})")
    against.add_argument("--all", action="store_true",
                         help="also list the moves within noise")
    against.add_argument("--threshold", type=float, default=None, metavar="X",
                         help="a speedup moved only where it moved by more than this fraction and "
                         "its intervals are apart (default: how far identical code reads between "
                         "runs on the runs' device: "
                         + ", ".join(f"{value:g} on {kind}"
                                     for kind, value in timing.RESOLUTION.items()) + ")")
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
        command.add_argument("--upstream-p", type=parse_p, default=FIELD_DEFAULTS["p"],
                             metavar="P", help="p for those files' passed/slower "
                             "(default: %(default)g)")
        command.add_argument("--upstream-version", choices=("v0", "main"), default="main",
                             help="the upstream version that wrote those files (default: main)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = argument_parser().parse_args(argv)
    files = UpstreamFiles(args.upstream_level, args.upstream_baseline, args.upstream_p,
                          args.upstream_version)
    if args.command == "compare":
        return run_compare(args, files)
    try:
        loaded = [(path, *load(path, files)) for path in args.reports]
        if args.command == "summary" and runs_of_their_own(loaded):
            return print_summary(side_by_side(loaded, args.p), args.fail_under)
        merged = merge_loaded(loaded)
    except (MergeError, resume.ResumeError, OSError, ValueError) as exc:
        print(f"kernelbench-report: {exc}", file=sys.stderr)
        return 2
    if args.command == "plot":
        return run_plot(merged, args.output)
    if args.command == "merge":
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(report.dump_json(merged))
        print(f"{len(merged['results'])} records from {len(args.reports)} report(s): {args.output}")
        return 0
    p = run_p(merged)
    ps = args.p if args.p is not None else run_ps(merged)
    rows = scoring.summarize(merged["results"], ps, p)
    return print_summary(Summary(rows, ps, [], report.at_k_lines(rows, p), merged["results"]),
                         args.fail_under)


def run_compare(args: argparse.Namespace, files: UpstreamFiles) -> int:
    try:
        before, after = compared_paths(args.before, args.after, history_folder(args.history))
        sides = [compare.Side.of(path, *load(path, files)) for path in (before, after)]
    except (history.HistoryError, resume.ResumeError, OSError, ValueError) as exc:
        print(f"kernelbench-report: compare: {exc}", file=sys.stderr)
        return 2
    comparison = compare.compare(sides[0], sides[1], args.threshold)
    print("\n".join(compare.lines(comparison, noise=args.all)))
    within = comparison.count(compare.NOISE)
    if within and not args.all:
        print(f"{within} move(s) within noise not listed (--all lists them)")
    return 1 if comparison.regressed and args.fail_on_regression else 0


def history_folder(path: Path) -> Path:
    """--history: a report (or its stream) names the history kept beside it; else a folder."""
    return history.folder_of(path) if path.suffix in (".json", ".jsonl") else path


def compared_paths(before: str | None, after: str | None, folder: Path) -> tuple[Path, Path]:
    """The two runs to compare: as named, the one named against the latest, or with no name
    the last two of the history."""
    if before is not None:
        return (history.resolve(before, folder),
                history.resolve(after if after is not None else history.LATEST, folder))
    held = history.entries(folder)
    if len(held) < 2:
        raise history.HistoryError(
            f"no two runs to compare in {history.shown(folder)} ({history.numbers_held(held)}): "
            "name them (compare BEFORE AFTER), or the history (--history)")
    return held[-2].path, held[-1].path


def run_plot(merged: report.Report, output: Path) -> int:
    try:
        written = plots.write_plots(merged["results"], run_p(merged), output)
    except plots.PlotError as exc:
        print(f"kernelbench-report: {exc}", file=sys.stderr)
        return 2
    print("\n".join(str(path) for path in written))
    return 0


if __name__ == "__main__":
    sys.exit(main())
