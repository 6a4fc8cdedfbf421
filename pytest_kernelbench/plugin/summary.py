"""The terminal section of a run: the fast_p tables under our rules and upstream's, and the
lines around them (a partial run, broken problems, unmatched files, notes). The report is
already written when it is drawn; this only displays what the run's results hold."""

from __future__ import annotations

from typing import Any

from pytest_kernelbench.engine.plan import RunPlan
from pytest_kernelbench.reporting import report
from pytest_kernelbench.reporting.results import RunResults


def write(terminal: Any, results: RunResults, plan: RunPlan, plot_line: str | None,
          verbose: bool) -> None:
    """Draw the section on pytest's terminal reporter."""
    settings = plan.settings
    records = results.all_records()
    rows, upstream_rows = results.summaries()
    terminal.write_sep("=", f"kernelbench: fast_p on {plan.device}")
    line = terminal.write_line
    partial = report.partial_line(results.completion(), settings.report_path)
    if partial:  # a run that stopped part-way says so first, in one line
        line(partial, red=True, bold=True)
    # Errors and warnings stay one line each (they name a file); notes are wrapped.
    for text in report.problem_lines(records):
        line(text, red=True)
    for text in report.orphan_lines(plan.orphans, verbose) + report.misnamed_lines(plan.misnamed):
        line(text, yellow=True)
    for text in report.missing_lines(records):
        line(text)
    if rows:  # else each selected problem is a problem_error: tables would be headers only
        for text in report.render_table(rows, settings.summary_ps).splitlines():
            line(text)
        for text in report.wrapped(report.unshown_lines(rows, settings.summary_ps)):
            line(text, yellow=True)
        line(report.GEOMEAN_NOTE)
        for text in report.wrapped(report.at_k_lines(rows, settings.p)):
            line(text)
        for text in report.fallback_lines(records):
            line(text, yellow=True)
        for text in report.wrapped(report.noise_lines(records)
                                   + report.inconclusive_lines(records)):
            line(text, yellow=True)
        terminal.write_sep("-", f"under upstream KernelBench {settings.upstream_rules}'s rules: "
                           "allclose only, inputs may change, no cheat checks, means")
        for text in report.render_table(upstream_rows, settings.summary_ps).splitlines():
            line(text)
        for text in report.wrapped(report.unshown_lines(upstream_rows, settings.summary_ps)):
            line(text, yellow=True)
    else:
        line(f"kernelbench: {report.unjudged_line(records)}", red=True)
    if settings.report_path is not None:  # where the report and the plots went
        line(f"kernelbench report: {settings.report_path}")
    if plot_line:
        line(plot_line)
