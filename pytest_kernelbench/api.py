"""Evaluating candidates without pytest: the core the pytest items call, as a Python API.

    from pytest_kernelbench import Session, evaluate

    record = evaluate("problems/level1/19_ReLU.py", "attempt.py", device="cuda")

    with Session(device="cuda", trials=5) as session:  # workers and builds reused
        for source in attempts:
            record = session.evaluate("problems/level1/19_ReLU.py", source)

A problem or candidate is a file path or the Python source itself (text with a line break).
Each call judges a snapshot of the candidate taken when it is called, so an agent may rewrite
the same file between calls. Options are the fields of `settings.Settings` (p, trials, atol,
rtol, timeout_s, seed, mode, timing, confine, heartbeat_s, ...), checked as the plugin checks its
options: a bad value raises `SettingsError` (a ValueError) naming the option, in the words the
command line uses (`--kb-p: p must be >= 0 ...`); the returned record is the one
the JSON report holds (`docs/report-schema.md`).

Each stage says when it starts, every `heartbeat_s` (30 s) while it runs and how it ended: as
INFO records on the `pytest_kernelbench` logger, and to `on_progress(event)` when given (an
`heartbeat.Event`; a heartbeat comes from another thread).
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_kernelbench.gpu import devices
from pytest_kernelbench.judge.evaluation import Evaluator
from pytest_kernelbench.record import Record
from pytest_kernelbench.reporting import heartbeat
from pytest_kernelbench.settings import Settings
from pytest_kernelbench.suite.discovery import Candidate, Case, Problem
from pytest_kernelbench.suite.manifest import load_manifest

SET_NAME = "api"
# Settings that only the pytest run uses (where files go, which problems it collects).
_RUN_ONLY = {"problems_dir", "candidate_dirs", "levels", "tags", "report_path", "costs_path",
             "shard", "resume_path", "feedback_dir", "plot_dir", "device"}
OPTIONS = sorted(f.name for f in dataclasses.fields(Settings)
                 if f.init and f.name not in _RUN_ONLY)
_PROBLEM_FILE = re.compile(r"^(?P<id>\d+)_(?P<name>.+)\.py$")
_LEVEL_DIR = re.compile(r"^level(?P<level>\d+)$")


class Session:
    """Evaluates many candidates with one set of options, on one device."""

    def __init__(self, device: str = "auto",
                 on_progress: Callable[[heartbeat.Event], None] | None = None, **options: Any):
        unknown = sorted(set(options) - set(OPTIONS))
        if unknown:
            raise TypeError(f"unknown option(s) {', '.join(unknown)}; "
                            f"known: {', '.join(OPTIONS)}")
        # Checked as the plugin checks its options (SettingsError) before anything is made.
        settings = Settings(problems_dir=Path("problems"), candidate_dirs=(), device=device,
                            report_path=None, **options)
        self.device = _resolve_device(device)
        self._scratch = Path(tempfile.mkdtemp(prefix="kernelbench-api-"))
        # Candidates are snapshots in a folder of their own: confined, one cannot read another.
        self._candidates = self._scratch / "candidates"
        self._candidates.mkdir()
        self.settings = dataclasses.replace(settings, problems_dir=self._scratch / "problems",
                                            candidate_dirs=(self._candidates,))
        self.evaluator = Evaluator(self.settings, self.device)
        self._calls = 0
        self.on_progress = on_progress

    def evaluate(self, problem: str | Path, candidate: str | Path) -> Record:
        """The record of one candidate against one problem: compile, correctness and speed."""
        self._calls += 1
        sample = f"a{self._calls}"
        problem_path = self._problem_file(problem)
        level, problem_id, name = identify(problem_path)
        # A problem of a suite with a manifest keeps the tolerances the manifest sets for it.
        entries = load_manifest(problem_path.parent.parent)
        if (level, problem_id) in entries:
            self.evaluator.overrides[(level, problem_id)] = entries[(level, problem_id)]
        snapshot = self._candidates / f"{sample}.py"
        snapshot.write_text(_source_of(candidate, "candidate"))
        case = Case(Problem(level, problem_id, name, problem_path), SET_NAME, sample,
                    Candidate(SET_NAME, level, problem_id, sample, snapshot))
        ev = self.evaluator
        outcome = None
        label = f"{case.problem.key}[{case.id}]"
        for stage in (ev.compile, ev.correct, ev.speed):
            with heartbeat.watch(label, stage.__name__, self.settings.heartbeat_s,
                                 self.on_progress) as watched:
                outcome = stage(case)
                watched.status = "skipped" if outcome.skipped else outcome.status
            if not outcome.passed:
                break
        assert outcome is not None
        return outcome.record

    def close(self) -> None:
        self.evaluator.close()
        shutil.rmtree(self._scratch, ignore_errors=True)

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _problem_file(self, problem: str | Path) -> Path:
        if isinstance(problem, Path) or "\n" not in problem:
            path = Path(problem).expanduser().resolve()
            if not path.is_file():
                raise FileNotFoundError(f"problem: no such file: {problem}")
            return path
        folder = self._scratch / "problems" / "level0"  # a source: level 0, id from the call
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{self._calls}_problem.py"
        path.write_text(problem)
        return path


def evaluate(problem: str | Path, candidate: str | Path, device: str = "auto",
             on_progress: Callable[[heartbeat.Event], None] | None = None,
             **options: Any) -> Record:
    """One candidate's record, in a session of its own (see Session for many)."""
    with Session(device, on_progress, **options) as session:
        return session.evaluate(problem, candidate)


def identify(path: Path) -> tuple[int, int, str]:
    """(level, id, name) from level<L>/<id>_<Name>.py; level and id 0 where the path says none."""
    file = _PROBLEM_FILE.match(path.name)
    folder = _LEVEL_DIR.match(path.parent.name)
    level = int(folder["level"]) if folder else 0
    if file:
        return level, int(file["id"]), file["name"]
    return level, 0, path.stem


def _source_of(candidate: str | Path, what: str) -> str:
    if isinstance(candidate, str) and "\n" in candidate:
        return candidate
    path = Path(candidate).expanduser()
    if not path.is_file():
        raise FileNotFoundError(f"{what}: no such file: {candidate}")
    return path.read_text()


def _resolve_device(requested: str) -> str:
    try:
        return devices.resolve_device(requested)
    except devices.DeviceUnavailable as exc:
        raise ValueError(f"device {exc}") from None
