"""The terminal section of a run: the cases behind the tables, the fast_p tables under our rules
and upstream's, and the lines around them (a partial run, broken problems, unmatched files,
notes). The report is already written when it is drawn; this only displays what the run's
results hold. pytest-benchmark's own table stays out of it unless asked for."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_kernelbench.engine.plan import RunPlan
from pytest_kernelbench.record import Record
from pytest_kernelbench.reporting import cli, compare, history, report, resume
from pytest_kernelbench.reporting.results import RunResults
from pytest_kernelbench.reporting.scoring import SetSummary
from pytest_kernelbench.settings import Settings


def write(terminal: Any, results: RunResults, plan: RunPlan, plot_line: str | None,
          verbose: bool) -> None:
    """Draw the section on pytest's terminal reporter."""
    settings = plan.settings
    records = results.all_records()
    terminal.write_sep("=", f"kernelbench: fast_p on {plan.device}")
    write_context(terminal, records, results, plan, verbose)
    for text in report.case_lines(records, settings.summary_cases):
        terminal.write_line(text)
    rows, upstream_rows = results.summaries()
    if rows:  # else each selected problem is a problem_error: tables would be headers only
        write_tables(terminal, rows, upstream_rows, records, settings)
    else:
        terminal.write_line(f"kernelbench: {report.unjudged_line(records)}", red=True)
    if settings.report_path is not None:  # where the report and the plots went
        terminal.write_line(f"kernelbench report: {settings.report_path}")
    if plot_line:
        terminal.write_line(plot_line)
    write_history(terminal, results, plan)


def write_context(terminal: Any, records: list[Record], results: RunResults, plan: RunPlan,
                  verbose: bool) -> None:
    """What the tables leave out: a run that stopped part-way, broken problems, candidate files
    judged against no problem or another one, problems a set has no candidate for."""
    line = terminal.write_line
    partial = report.partial_line(results.completion(), plan.settings.report_path)
    if partial:  # a run that stopped part-way says so first, in one line
        line(partial, red=True, bold=True)
    # Errors and warnings stay one line each (they name a file); notes are wrapped.
    for text in report.problem_lines(records):
        line(text, red=True)
    for text in report.orphan_lines(plan.orphans, verbose) + report.misnamed_lines(plan.misnamed):
        line(text, yellow=True)
    for text in report.missing_lines(records):
        line(text)


def write_tables(terminal: Any, rows: list[SetSummary], upstream_rows: list[SetSummary],
                 records: list[Record], settings: Settings) -> None:
    """The fast_p table and its notes, then the same under upstream's rules."""
    line = terminal.write_line
    for text in report.render_table(rows, settings.summary_ps).splitlines():
        line(text)
    for text in report.wrapped(report.unshown_lines(rows, settings.summary_ps)):
        line(text, yellow=True)
    line(report.GEOMEAN_NOTE)
    for text in report.wrapped(report.at_k_lines(rows, settings.p)):
        line(text)
    for text in report.fallback_lines(records):
        line(text, yellow=True)
    for text in report.wrapped(report.noise_lines(records) + report.inconclusive_lines(records)):
        line(text, yellow=True)
    terminal.write_sep("-", f"under upstream KernelBench {settings.upstream_rules}'s rules: "
                       "allclose only, inputs may change, no cheat checks, means")
    for text in report.render_table(upstream_rows, settings.summary_ps).splitlines():
        line(text)
    for text in report.wrapped(report.unshown_lines(upstream_rows, settings.summary_ps)
                               + report.untimed_upstream_lines(records,
                                                               settings.upstream_timing)):
        line(text, yellow=True)


# pytest-benchmark options whose output is its table or is drawn with it: a comparison is read
# in the table, histograms are drawn from it, cProfile's tables follow it. Giving one asks for
# the table. (--benchmark-verbose needs no entry: pytest-benchmark lets it win over quiet.)
TABLE_OPTIONS = ("benchmark_compare", "benchmark_histogram", "benchmark_cprofile")


def hide_benchmark_table(config: pytest.Config, asked: bool) -> None:
    """Keep pytest-benchmark's table out of the terminal unless asked for (--kb-benchmark-table
    or an option of TABLE_OPTIONS).

    Its table holds one group per problem, the candidate's side alone (no baseline, no
    speedup): about 80 lines for twelve problems, which push the kernelbench section off the
    screen while saying less per case than its case lines do. --benchmark-quiet, which this
    sets, is pytest-benchmark's own switch that hides the table (and its info lines) and keeps
    what the speed items feed it: the samples are still recorded, --benchmark-json and
    --benchmark-save still written, --benchmark-compare-fail still checked. --benchmark-disable
    and --benchmark-skip would drop the samples or the items themselves."""
    if asked or not hasattr(config.option, "benchmark_quiet"):  # pytest-benchmark not loaded
        return
    if any(config.getoption(name, None) for name in TABLE_OPTIONS):
        return
    config.option.benchmark_quiet = True


# How each kind of move is drawn; the others are plain.
_MARKUP = {compare.NOW_FAILS: {"red": True}, compare.SLOWER: {"yellow": True},
           compare.NOW_PASSES: {"green": True}, compare.FASTER: {"green": True}}


def write_history(terminal: Any, results: RunResults, plan: RunPlan) -> None:
    """Where the run was kept in the report's history, and with --kb-compare what moved beyond
    the timing's noise since the run it names (reporting/compare.py)."""
    if results.kept is not None:
        terminal.write_line(f"kernelbench history: run {results.kept.number}, "
                            f"{history.shown(results.kept.path)}")
    path = plan.settings.compare_path
    if path is None:
        return
    try:
        before = compare.Side.of(path, *cli.load(path))
    except (resume.ResumeError, OSError, ValueError) as exc:
        terminal.write_line(f"kernelbench: no comparison: {exc}", red=True)
        return
    kept, written = results.kept, results.written
    if kept is not None and written is not None:
        after = compare.Side.of(kept.path, {k: v for k, v in written.items() if k != "results"},
                                written["results"], label=f"run {kept.number} (this run)")
    else:  # no report written (--kb-report=none): the records, on this run's device
        after = compare.Side.of(None, {"config": {"device": plan.device}},
                                results.all_records())
    comparison = compare.compare(before, after)
    terminal.write_sep("-", f"kernelbench: compared with {before.label}")
    for text in comparison.header():
        terminal.write_line(text)
    for move in comparison.listed():
        terminal.write_line(compare.line(move), **_MARKUP.get(move.kind, {}))
