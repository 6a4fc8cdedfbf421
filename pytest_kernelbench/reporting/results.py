"""The records of one run as they settle, and what is written from them.

The process that writes the report (the pytest process, or xdist's controller) holds one
RunResults: each stage's record arrives here, the latest stage of a case wins (xdist may report
a case's stages out of order), every record is streamed to the .jsonl beside the report, and at
session finish the report and the feedback files are written from what is here. A case the run
selected but stopped before counts too, as a `not_run` record (see progress.py). Nothing here
knows about pytest.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

from pytest_kernelbench import faults
from pytest_kernelbench.record import CaseKey, Fingerprint, Record, set_fingerprint
from pytest_kernelbench.reporting import feedback, history, plots, report, resume, scoring
from pytest_kernelbench.settings import Settings

# Every xdist worker plans every build; the one that ran it says more than those that found it
# done or waited for it.
_BUILD_PRECEDENCE = {"built": 0, "failed": 1, "deferred": 2, "cached": 3}

# A build's entry in the report: candidate, status, seconds, message (pool.BuildPool.entry).
BuildEntry = dict[str, Any]


class RunResults:
    def __init__(self, settings: Settings, device: str,
                 fingerprints: dict[CaseKey, Fingerprint | None], final_stage: int) -> None:
        self.settings = settings
        self.device = device
        self.fingerprints = fingerprints
        self.final_stage = final_stage
        self.records: dict[CaseKey, Record] = {}
        self.stages: dict[CaseKey, int] = {}  # the latest stage each record came from
        self.builds: list[BuildEntry] = []  # extension builds run ahead of the items
        self.stream: resume.RecordStream | None = None
        # Selected cases the run stopped before settling: a placeholder record for those that
        # have none, how many there were, and the command that finishes the run.
        self.not_run: dict[CaseKey, Record] = {}
        self.unfinished = 0
        self.resume_command: str | None = None
        # The report as written, and the run's copy in the report's history (history.py).
        self.written: report.Report | None = None
        self.kept: history.Entry | None = None

    def open_stream(self, resumed: dict[CaseKey, Record]) -> None:
        """Stream records beside the report from now on, starting with the resumed ones."""
        if self.settings.report_path is None:
            return
        self.stream = resume.RecordStream(resume.stream_path(self.settings.report_path))
        for record in resumed.values():
            self.stream.write(record, self.final_stage)

    def resume(self, resumed: dict[CaseKey, Record]) -> None:
        for key, record in resumed.items():
            self.records[key] = record
            self.stages[key] = self.final_stage

    def add(self, record: Record, stage: int) -> None:
        key = resume.record_key(record)
        set_fingerprint(record, self.fingerprints.get(key))
        if stage >= self.stages.get(key, -1):
            self.stages[key] = stage
            self.records[key] = record
            if self.stream is not None:
                self.stream.write(record, stage)

    def add_builds(self, entries: list[BuildEntry]) -> None:
        """Build entries of one process; a candidate's most telling entry is kept."""
        known = {entry["candidate"]: entry for entry in self.builds}
        for entry in entries:
            known[entry["candidate"]] = merge_build(known.get(entry["candidate"]), entry)
        self.builds = sorted(known.values(), key=lambda entry: entry["candidate"])

    def stopped_before(self, records: dict[CaseKey, Record], unfinished: int,
                       resume_command: str | None) -> None:
        """The run did not settle `unfinished` of its cases; records: placeholders (status
        not_run) for each of them. One the run stopped in, between or inside its stages, keeps
        its own record, with no verdict it did not reach (cut_off)."""
        self.not_run = {key: record for key, record in records.items()
                        if key not in self.records}
        for key in records.keys() & self.records.keys():
            self.records[key] = cut_off(self.records[key])
        self.unfinished = unfinished
        self.resume_command = resume_command

    @property
    def complete(self) -> bool:
        return self.unfinished == 0

    def all_records(self) -> list[Record]:
        """Every selected case's record: those that settled, then the placeholders."""
        return [*self.records.values(), *(record for key, record in self.not_run.items()
                                          if key not in self.records)]

    def summaries(self) -> tuple[list[scoring.SetSummary], list[scoring.SetSummary]]:
        """The fast_p rows under this harness's rules and under upstream's, over every selected
        case (those that never ran count as not correct)."""
        records = self.all_records()
        ps = self.settings.summary_ps
        return (scoring.summarize(records, ps, self.settings.p),
                scoring.summarize_upstream(records, ps, self.settings.p))

    def write_report(self) -> None:
        path = self.settings.report_path
        records = self.all_records()
        if path is None or not records:
            return
        rows, upstream_rows = self.summaries()
        now = datetime.now(timezone.utc)
        env = report.environment(self.settings.confine, now)
        entered = sorted({mode for r in records if (mode := r.get("confinement"))})
        if entered:  # what the workers entered, not only what the kernel offers
            env["confinement"] = "; ".join(entered)
        document = report.build_report(records, rows, self.settings, self.device, env,
                                       upstream_rows, self.completion())
        # The records' own entries: an xdist worker's list reaches this process only when
        # the worker ends, which an interrupted run's workers may not do.
        self.add_builds([entry for r in records if (entry := r.get("prebuild"))])
        document["builds"] = self.builds
        text = report.dump_json(document)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        self.written = document
        # Once per run: only the process that writes the report gets here, once, at its end.
        self.kept = history.keep(path, text, now)

    def completion(self) -> report.Completion:
        """The report's word on whether the run covered every case it selected."""
        return {"complete": self.complete, "cases_not_run": self.unfinished,
                "resume_command": self.resume_command}

    def write_feedback(self) -> None:
        folder = self.settings.feedback_dir
        if folder is None:
            return
        for record in self.records.values():
            if record.get("candidate_path") is None:
                continue  # no candidate, nothing to say to its author
            info = feedback.feedback(record, self.settings.p)
            stem = folder / feedback.file_stem(record)
            stem.parent.mkdir(parents=True, exist_ok=True)
            (stem.parent / f"{stem.name}.json").write_text(json.dumps(info, indent=1,
                                                                       default=str) + "\n")
            (stem.parent / f"{stem.name}.txt").write_text(feedback.render(info))

    def write_plots(self) -> str | None:
        """The plots (--kb-plot), and a line saying where they went or why none were made."""
        folder = self.settings.plot_dir
        if folder is None or not self.records:
            return None
        try:
            written = plots.write_plots(list(self.records.values()), self.settings.p, folder)
        except plots.PlotError as exc:
            return f"kernelbench: no plots: {exc}"
        return f"kernelbench plots: {', '.join(str(path) for path in written)}"

    def close(self) -> None:
        if self.stream is not None:
            self.stream.close()


def cut_off(record: Record) -> Record:
    """The record of a case the run stopped in, between or inside its stages. A stage that
    failed keeps its verdict: the later ones would only have been skipped. Without one (it
    compiled and was not judged, or was judged and not timed) the case is `not_run`, as one the
    run never started is: the same status for every case the run did not finish, so the
    report's `cases_not_run`, a merge and a resume treat them alike. What its stages measured
    stays; it counts as not correct, under upstream's rules too, and `error` says how far it
    got."""
    status = record.get("status")
    if status not in (None, faults.PASSED):
        return record
    reached = ("passed correctness and was not timed" if status == faults.PASSED
               else "compiled and was not judged" if record.get("compiled")
               else "was not compiled")
    upstream_verdict = record.get("upstream")
    if upstream_verdict:
        upstream_verdict = {"rules": upstream_verdict["rules"],
                            "compiled": upstream_verdict["compiled"], "correct": None,
                            "speedup": None}
    return {**record, "status": faults.NOT_RUN, "correct": False, "upstream": upstream_verdict,
            "fast": None, "error": f"the run stopped in this case: it {reached}"}


def build_entries(planned: list[Any]) -> list[BuildEntry]:
    """builds.Build objects as the report lists them (pool.BuildPool.entry's shape)."""
    return [build.entry() for build in planned]


def merge_build(known: BuildEntry | None, entry: BuildEntry) -> BuildEntry:
    """The more telling of two processes' entries for one candidate's build."""
    if known is None:
        return entry
    rank = _BUILD_PRECEDENCE.get
    return entry if rank(entry["status"], 4) < rank(known["status"], 4) else known

