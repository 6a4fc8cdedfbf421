"""Rendering results: the terminal table and the JSON report. Pure: returns strings and dicts."""

from __future__ import annotations

import json
import math
import platform
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from typing import Any, TypedDict

from pytest_kernelbench import confine, faults
from pytest_kernelbench.faults import MISSING, NOT_RUN, PROBLEM_ERROR
from pytest_kernelbench.gpu import devices
from pytest_kernelbench.judge import fast
from pytest_kernelbench.record import Record
from pytest_kernelbench.reporting.scoring import SetSummary
from pytest_kernelbench.settings import Settings
from pytest_kernelbench.suite.discovery import Candidate, Problem, Unmatched

SCHEMA_VERSION = 9  # record.py and report.schema.json: bump with any change of fields

Report = dict[str, Any]  # the JSON report (report.schema.json), records under "results"


class Completion(TypedDict):
    """Whether a run covered every case it selected, and the command that finishes it."""

    complete: bool
    cases_not_run: int
    resume_command: str | None


def format_p(p: float) -> str:
    return f"{p:g}"


UNSHOWN_MARK = "*"  # a fast_p cell that speedups above p, not shown to be, hold down


def render_table(rows: list[SetSummary], ps: Sequence[float]) -> str:
    """The fast_p table at the thresholds ps (a run's Settings.summary_ps, or those asked for);
    each row must hold them. A cell that unshown speedups hold down is marked (unshown_lines
    says how many)."""
    import tabulate

    headers = ["set", "level", "problems", "missing", "compiled", "correct",
               *[f"fast_{format_p(x)}" for x in ps], "geomean"]
    body = []
    for row in rows:
        body.append([
            row.candidate_set, row.level, row.problems, row.missing, row.compiled, row.correct,
            *[f"{row.fast[x]:.3f}" + (UNSHOWN_MARK if row.unshown.get(x) else "") for x in ps],
            "-" if row.geomean_speedup is None else f"{row.geomean_speedup:.3f}x",
        ])
    # tabulate pads headers by two spaces more than the widest cell; without it the table of
    # a set of usual name fits in SUMMARY_WIDTH columns
    padding, tabulate.MIN_PADDING = tabulate.MIN_PADDING, 0
    try:
        table = tabulate.tabulate(body, headers=headers, tablefmt="github",
                                  disable_numparse=True)
    finally:
        tabulate.MIN_PADDING = padding
    return table


SUMMARY_WIDTH = 100  # columns the terminal summary's lines are wrapped to
GEOMEAN_NOTE = "geomean: of the speedups of the correct candidates"


def wrapped(lines: list[str]) -> list[str]:
    """Lines wrapped to SUMMARY_WIDTH, continuations indented."""
    import textwrap

    return [part for line in lines for part in
            textwrap.wrap(line, SUMMARY_WIDTH, subsequent_indent="  ", break_on_hyphens=False)
            or [""]]


def unshown_lines(rows: list[SetSummary], ps: Sequence[float]) -> list[str]:
    """Per p whose cells are marked, one line: how many problems read a speedup above p that
    their timing does not show, and so count as not fast (judge/fast.py), row by row. Without
    it, a column of 0.000 over speedups of 0.99 at p=0.9 reads as a fault of the table."""
    lines = []
    for x in ps:
        held = [(row, row.unshown[x]) for row in rows if row.unshown.get(x)]
        if not held:
            continue
        where = ", ".join(f"{count} in {row.candidate_set} level{row.level}" for row, count in held)
        lines.append(f"{UNSHOWN_MARK}fast_{format_p(x)}: {sum(count for _, count in held)} "
                     f"correct problem(s) read a speedup above {format_p(x)} that their timing "
                     f"does not show (no interval and too small a lead, or an interval that "
                     f"holds {format_p(x)}), so count as not fast: {where}")
    return lines


def at_k_lines(rows: list[SetSummary], p: float) -> list[str]:
    """pass@k and fast_p@k of the sets with several samples per problem, a line each."""
    lines = []
    for row in rows:
        if row.pass_at_k:
            passes = ", ".join(f"pass@{k} {v:.3f}" for k, v in row.pass_at_k.items())
            fasts = ", ".join(f"fast_{format_p(p)}@{k} {v:.3f}" for k, v in row.fast_at_k.items())
            lines.append(f"{row.candidate_set} level {row.level}: {passes}; {fasts} "
                         "(unbiased estimates over each problem's samples)")
    return lines


def case_label(record: Record) -> str:
    """A case as its items name it: level1/19_ReLU[r1-s0]."""
    name = f"_{record['problem']}" if record.get("problem") else ""
    return (f"level{record['level']}/{record['problem_id']}{name}"
            f"[{record['candidate_set']}-{record['sample']}]")


# Statuses that a line of their own counts above the tables (missing_lines, partial_line,
# problem_lines): not repeated case by case.
_COUNTED_APART = (MISSING, NOT_RUN, PROBLEM_ERROR)
ERROR_CHARS = 40  # the fewest of a failure's reason its one line shows


def case_lines(records: list[Record], shown: int | None) -> list[str]:
    """The cases behind the tables: those the speed item timed to a verdict that is no
    failure, fastest first (the `shown` fastest and slowest; None: all), then every failure
    with its status and the start of its reason, a line each."""
    timed = sorted((r for r in records if r.get("status") in fast.TIMED_STATUSES),
                   key=lambda r: (r.get("speedup") is None, -(r.get("speedup") or 0.0),
                                  case_label(r)))
    lines = []
    if timed and shown != 0:
        lines.append(f"timed: {len(timed)} case(s), fastest first (speedup, 95% interval, "
                     "verdict)")
        rows = [_timed_line(r) for r in timed]
        if shown is not None and len(rows) > 2 * shown:
            rows[shown:-shown] = [f"  ... {len(rows) - 2 * shown} more "
                                  "(--kb-cases=all lists every case)"]
        lines += rows
    failed = sorted(((status, r) for r in records if (status := r.get("status")) is not None
                     and status not in (*fast.TIMED_STATUSES, *_COUNTED_APART)),
                    key=lambda item: (item[1]["level"], item[1]["problem_id"],
                                      item[1]["candidate_set"], item[1]["sample"]))
    if failed:
        width = max(len(status) for status, _ in failed)
        lines.append(f"failed: {len(failed)} case(s) (status, case: why)")
        for status, r in failed:
            head = f"  {status:<{width}}  {case_label(r)}: "
            # cut to the summary's width, but never to fewer characters of the reason than these
            room = max(SUMMARY_WIDTH - len(head), ERROR_CHARS)
            lines.append(head + faults.one_line(r.get("error") or "-", room))
    return lines


def _timed_line(record: Record) -> str:
    speedup = record.get("speedup")
    # None where the harness's clock set the speedup; an infinite upper end: too few calls
    low, high = record.get("speedup_interval") or (None, None)
    span = f"{low or 0.0:.3f}-{high:.3f}" if high is not None and math.isfinite(high) else "-"
    return (f"  {'-' if speedup is None else f'{speedup:.3f}x':>8}  {span:<11}  "
            f"{record['status']:<12}  {case_label(record)}")


def problem_lines(records: list[Record]) -> list[str]:
    """One line per problem that could not be evaluated (its cases are not scored)."""
    broken: dict[str | None, list[Record]] = {}
    for record in records:
        if record.get("status") == PROBLEM_ERROR:
            broken.setdefault(record["error"], []).append(record)
    return [f"error: {message} ({len(cases)} case(s) not evaluated, not scored)"
            for message, cases in broken.items()]


def unjudged_line(records: list[Record]) -> str:
    """The line said in place of the fast_p tables when they would have no row: no selected
    problem could be judged (each is a problem_error), or there were no records at all."""
    broken = {(r["level"], r["problem_id"]) for r in records if r.get("status") == PROBLEM_ERROR}
    if not broken:
        return "no records to summarise"
    return f"no problem could be judged: {len(broken)} problem_error"


def orphan_lines(orphans: list[Unmatched], verbose: bool) -> list[str]:
    """Candidate files that no problem is judged against (discovery.Unmatched): every one
    counted in one line with an example, each listed under -v."""
    if not orphans:
        return []
    first = orphans[0]
    lines = [f"warning: {len(orphans)} candidate file(s) match no problem and were not "
             f"evaluated, e.g. {first.shown} ({first.why})" + ("" if verbose else " (-v lists them)")]
    if verbose:
        lines += [f"  {orphan.shown} ({orphan.why})" for orphan in orphans]
    return lines


def misnamed_lines(misnamed: list[tuple[Candidate, Problem]]) -> list[str]:
    """Candidate files whose name names another problem than their id's (a likely typo)."""
    return [f"warning: {candidate.path} is judged as {problem.key} (its id), but its name says "
            f"otherwise" for candidate, problem in misnamed]


def noise_lines(records: list[Record]) -> list[str]:
    """One line when speedups rest on too few timed calls for an interval: a reading off 1.0
    there (an honest candidate at 0.45x was seen on a CPU) is timing noise, not a verdict."""
    timed = [r for r in records if r.get("speedup") is not None and r.get("baseline_stats")]
    thin = [r for r in timed if not _has_interval(r)]
    if not thin:
        return []
    calls = sorted({min((r.get("baseline_stats") or {})["n"],
                        (r.get("candidate_stats") or {}).get("n", 0)) for r in thin})
    span = str(calls[0]) if len(calls) == 1 else f"{calls[0]}-{calls[-1]}"
    return [f"note: {len(thin)} of {len(timed)} speedups rest on {span} timed call(s) a side, "
            "too few for an interval: readings off 1.0 there may be noise (more with "
            "--benchmark-max-time or --benchmark-min-rounds)"]


def _has_interval(record: Record) -> bool:
    """Whether the speedup has a finite interval (too few timed calls leave it unbounded)."""
    upper = (record.get("speedup_interval") or [0.0, 0.0])[1]
    return upper is not None and math.isfinite(upper)


def inconclusive_lines(records: list[Record]) -> list[str]:
    """One line counting the speed items that neither passed nor failed: the timing could not
    tell the speedup from p, or the harness's clock could not settle the reported time."""
    flagged = [r for r in records
               if any(flag.startswith("inconclusive") for flag in r.get("flags") or [])]
    if not flagged:
        return []
    return [f"inconclusive: {len(flagged)} speed item(s) skipped, neither passed nor failed: the "
            "timing could not tell the speedup from p (counted as not faster; more "
            "--benchmark-max-time decides them)"]


def untimed_upstream_lines(records: list[Record], timed: bool = False) -> list[str]:
    """One line under upstream's table counting the cases only its rules pass that have no
    speedup of theirs, which its fast_p counts as not fast: not timed (`timed`, the run's
    --kb-upstream-timing, off), or timed without a figure (on)."""
    def untimed(record: Record) -> bool:
        verdict = record.get("upstream")
        return not record.get("correct") and verdict is not None \
            and bool(verdict["correct"]) and verdict["speedup"] is None

    count = sum(1 for r in records if untimed(r))
    if not count:
        return []
    if timed:
        return [f"no speedup: {count} case(s) correct under upstream's rules only, whose timing "
                "gave none (see each record's upstream entry), counted as not fast here"]
    return [f"not timed: {count} case(s) correct under upstream's rules only, counted as not "
            "fast here (--kb-upstream-timing=on times them, with the device to itself)"]


def fallback_lines(records: list[Record]) -> list[str]:
    """One line per correct candidate whose own extension failed or was never loaded: it
    passed on PyTorch, not on its kernel."""
    lines = []
    for r in records:
        if r.get("correct") and r.get("extension") in ("failed", "not_loaded"):
            why = "its extension failed to build" if r["extension"] == "failed" \
                else "it never loaded the extension it built"
            detail = f": {r['extension_error']}" if r.get("extension_error") else ""
            lines.append(f"warning: {r['candidate_set']} level{r['level']}/{r['problem_id']} "
                         f"{r['sample']} is correct but ran without its own kernel ({why})"
                         f"{detail}")
    return lines


def environment(confine_mode: str = "auto", written: datetime | None = None) -> dict[str, Any]:
    """Where and when the numbers came from, and what confined the candidates (see confine.py).
    written: when the report is written (`date`, UTC); `commit`: git_commit of the folder the
    run started in."""
    import torch

    info = {
        "date": None if written is None else written.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "commit": git_commit(Path.cwd()),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "gpu": None,
        "driver": None,
        "confinement": confine.expected(confine_mode).describe(),
    }
    if torch.cuda.is_available():
        info["gpu"] = torch.cuda.get_device_name()
        info["driver"] = devices.driver_version()
    return info


def git_commit(folder: Path) -> str | None:
    """The commit a folder's git checkout is at, with `-dirty` where tracked files differ from
    it (tags left out: a hash names one commit on every machine); None outside a checkout or
    without git."""
    command = ["git", "describe", "--always", "--dirty", "--abbrev=12", "--exclude=*"]
    try:
        done = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return (done.stdout.strip() or None) if done.returncode == 0 else None


def summary_rows(rows: list[SetSummary]) -> list[dict[str, Any]]:
    return [
        {
            "candidate_set": row.candidate_set, "level": row.level, "problems": row.problems,
            "missing": row.missing, "compiled": row.compiled, "correct": row.correct,
            **{f"fast_{format_p(x)}": row.fast[x] for x in row.fast},
            "geomean_speedup": row.geomean_speedup,
            **{f"pass@{k}": value for k, value in row.pass_at_k.items()},
            **{f"fast_p@{k}": value for k, value in row.fast_at_k.items()},
        }
        for row in rows
    ]


def build_report(records: list[Record], rows: list[SetSummary], settings: Settings,
                 device: str, env: dict[str, Any], upstream_rows: list[SetSummary] | None = None,
                 completion: Completion | None = None) -> Report:
    """completion: `complete`, `cases_not_run` and `resume_command` (RunResults.completion);
    by default those of a complete run."""
    config = {key: (str(value) if isinstance(value, Path) else value)
              for key, value in asdict(settings).items()}
    config["candidate_dirs"] = [str(path) for path in settings.candidate_dirs]
    config["device"] = device
    return {
        "schema_version": SCHEMA_VERSION,
        **(completion or completion_of(records)),
        "environment": env,
        "config": config,
        "summary": summary_rows(rows),
        # The same table under upstream KernelBench's rules (config.upstream_rules).
        "summary_upstream": summary_rows(upstream_rows or []),
        "results": sorted(records, key=lambda r: (r["candidate_set"], r["level"],
                                                   r["problem_id"], r["sample"])),
    }


def completion_of(records: list[Record]) -> Completion:
    """What records alone say of a run's completion (a merge's: no command finishes it)."""
    left = sum(r.get("status") == NOT_RUN for r in records)
    return {"complete": left == 0, "cases_not_run": left, "resume_command": None}


def partial_line(completion: Completion, report_path: Path | None) -> str | None:
    """One line for a run that stopped before all its cases ran; None for a complete one."""
    if completion["complete"]:
        return None
    head = (f"kernelbench: partial run: {completion['cases_not_run']} selected case(s) did not "
            "run to the end, and count as not correct")
    if completion["resume_command"]:
        return f"{head}; to finish it: {completion['resume_command']}"
    if report_path is None:
        return f"{head}; no report was written to resume from (--kb-report=none)"
    return head


def missing_lines(records: list[Record]) -> list[str]:
    """One line per set with problems it has no candidate for (they count as not correct)."""
    by_set: dict[str, set[tuple[int, int]]] = {}
    for record in records:
        if record.get("status") == MISSING:
            by_set.setdefault(record["candidate_set"], set()).add(
                (record["level"], record["problem_id"]))
    return [f"missing: {len(problems)} problem(s) have no candidate in set {name}, "
            "counted as not correct" for name, problems in by_set.items()]


def dump_json(report: Report) -> str:
    return json.dumps(report, indent=2, sort_keys=False, default=str) + "\n"
