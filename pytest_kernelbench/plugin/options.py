"""The kernelbench options on pytest's command line and in ini files, read into Settings."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from pytest_kernelbench.reporting import history, resume
from pytest_kernelbench.settings import (
    FIELD_DEFAULTS,
    OPTIONS,
    REPORT_DEFAULT,
    Option,
    Settings,
    SettingsError,
    bundled_problems,
    default_build_cache,
)
from pytest_kernelbench.suite import generated


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("kernelbench", "KernelBench kernel evaluation")
    for option in OPTIONS:
        text = option.help.replace("{default}", option.shown(option.default))
        if option.kind == "switch":
            group.addoption(option.flag, dest=option.dest, action="store_true", default=None,
                            help=text)
        elif option.kind == "dirs":
            group.addoption(option.flag, dest=option.dest, action="append", default=[],
                            metavar=option.metavar, help=text + " (ini: one per line)")
        else:
            group.addoption(option.flag, dest=option.dest, type=option.parse, default=None,
                            metavar=option.metavar, help=text)
        if not option.ini:
            continue
        ini_help = text.replace("%%", "%")
        if option.kind == "switch":
            parser.addini(option.dest, ini_help, type="bool")
        elif option.kind == "dirs":
            parser.addini(option.dest, ini_help, type="linelist")
        else:
            parser.addini(option.dest, ini_help, type="string")




class Given:
    """Where an option's value comes from: the command line, else the ini file, each with the
    folder a relative path in it is read from."""

    def __init__(self, config: pytest.Config):
        self.config = config
        self.cli_base = Path(config.invocation_params.dir)
        self.ini_base = config.inipath.parent if config.inipath else config.rootpath

    def __call__(self, option: Option) -> tuple[Any, Path] | None:
        """(value, its folder), or None when not given."""
        value = self.config.getoption(option.dest)
        if value not in (None, []):
            return value, self.cli_base
        if not option.ini:
            return None
        text = self.config.getini(option.dest)
        if text in (None, "", []):
            return None
        if option.kind in ("switch", "dirs") or option.parse is None:
            return text, self.ini_base
        try:
            return option.parse(text), self.ini_base
        except argparse.ArgumentTypeError as exc:
            raise pytest.UsageError(f"ini option {option.dest}: {exc}") from None


def read_settings(config: pytest.Config) -> Settings | None:
    """Validated settings, or None when no candidate set was asked for (plugin stays idle)."""
    given = Given(config)
    by_field = {option.field: option for option in OPTIONS}
    sets = given(by_field["candidate_dirs"])
    if sets is None:
        return None
    problems_dir = _problems_dir(given(by_field["problems_dir"]), given.ini_base)
    candidate_dirs = _candidate_sets(sets, problems_dir)
    report_text, report_base = given(by_field["report_path"]) or (REPORT_DEFAULT, given.ini_base)
    report_path = None if report_text.lower() == "none" else report_base / report_text
    costs = given(by_field["costs_path"])
    costs_path = _costs_path(costs[0] if costs else None,
                             costs[1] if costs else given.cli_base, report_path)
    compare_path = _compare_path(given(by_field["compare_path"]),
                                 report_path or given.ini_base / REPORT_DEFAULT)
    try:
        return Settings(
            problems_dir=problems_dir,
            candidate_dirs=candidate_dirs,
            report_path=report_path,
            costs_path=costs_path,
            compare_path=compare_path,
            time_budget_s=float(_benchmark_option(config, "benchmark_max_time",
                                                  FIELD_DEFAULTS["time_budget_s"])),
            min_rounds=int(_benchmark_option(config, "benchmark_min_rounds",
                                             FIELD_DEFAULTS["min_rounds"])),
            **_plain_values(given),
        )
    except SettingsError as exc:  # the parsers ran the same checks: a last word, not expected
        raise pytest.UsageError(str(exc)) from None


def _problems_dir(given: tuple[Any, Path] | None, ini_base: Path) -> Path:
    """--kb-problems, else ./problems, else the suite that ships."""
    problems = given or ("problems", ini_base)
    bundled = bundled_problems()
    if problems[0] == "problems" and not (problems[1] / "problems").is_dir() and bundled:
        problems = (str(bundled), bundled.parent)
    return _existing_dir(problems[0], problems[1], "--kb-problems")


def _candidate_sets(sets: tuple[Any, Path], problems_dir: Path) -> tuple[Path, ...]:
    candidate_dirs = tuple(_candidate_set(text, sets[1], problems_dir) for text in sets[0])
    names = [path.name for path in candidate_dirs]
    if len(set(names)) != len(names):
        raise pytest.UsageError(
            f"--kb-candidates: two sets share a folder name ({', '.join(names)}); "
            "set names come from folder names and must differ"
        )
    return candidate_dirs


def _plain_values(given: Given) -> dict[str, Any]:
    """The given options other than the folders, the report, the costs file and the run to
    compare with, by field."""
    values: dict[str, Any] = {}
    for option in OPTIONS:
        if option.kind in ("dirs", "report", "costs", "compare") or option.field == "problems_dir":
            continue
        found = given(option)
        if found is None:
            continue
        value, base = found
        if option.kind == "path":
            value = _optional_path(value, base)
        elif option.kind == "file":
            value = _existing_file(value, base, option.flag)
        values[option.field] = option.to_field(value)
    return values


def _benchmark_option(config: pytest.Config, name: str, default):
    # Timing budgets follow pytest-benchmark's own options when that plugin is loaded.
    try:
        value = config.getoption(name)
    except ValueError:
        return default
    return default if value is None else value


def _optional_path(text: str | None, base: Path) -> Path | None:
    return None if not text else (base / Path(text).expanduser()).resolve()


def _costs_path(text: str | None, base: Path, report_path: Path | None) -> Path | None:
    """--kb-costs as given (it must exist), else an earlier run's report when there is one."""
    if text is None:
        return report_path if report_path is not None and report_path.is_file() else None
    if text.lower() == "none":
        return None
    path = (base / Path(text).expanduser()).resolve()
    if not path.is_file():
        raise pytest.UsageError(f"--kb-costs: no such file: {text}")
    return path


def _compare_path(given: tuple[Any, Path] | None, report_path: Path) -> Path | None:
    """--kb-compare: a run of the report's history or a report, found as the run starts, so
    that `latest` is the run before this one and a run that is not there stops it at once.
    The report this run writes (or its stream) stands for the run that wrote it last, whose
    copy the history keeps: this run overwrites the file before the comparison reads it."""
    if given is None:
        return None
    text, base = given
    folder = history.folder_of(report_path)
    try:
        path = history.resolve(text, folder, base).resolve()
    except history.HistoryError as exc:
        raise pytest.UsageError(f"--kb-compare: {exc}") from None
    if path not in (report_path.resolve(), resume.stream_path(report_path).resolve()):
        return path
    held = history.entries(folder)
    if not held:
        raise pytest.UsageError(f"--kb-compare: {text} is the report this run overwrites, and "
                                f"{history.shown(folder)} holds no copy of it: copy it aside "
                                "and name the copy")
    return held[-1].path.resolve()


def _candidate_set(text: str, base: Path, problems_dir: Path) -> Path:
    """A set's folder: as given, or for builtin:NAME generated from the run's problems into the
    cache (or found there)."""
    if not text.startswith(generated.PREFIX):
        return _existing_dir(text, base, "--kb-candidates")
    name = text.removeprefix(generated.PREFIX)
    if name not in generated.SETS:
        raise pytest.UsageError(f"--kb-candidates: {generated.unknown_set_message(name)}")
    try:
        return generated.cached_set(problems_dir, name, builtin_sets_root())
    except OSError as exc:
        raise pytest.UsageError(f"--kb-candidates: cannot write {text}: {exc}") from None


def builtin_sets_root() -> Path:
    """Generated candidate sets live beside the extension builds, in the same cache."""
    return default_build_cache().parent / "candidate-sets"


def _existing_dir(text: str, base: Path, option: str) -> Path:
    path = (base / Path(text).expanduser()).resolve()
    if not path.is_dir():
        raise pytest.UsageError(f"{option}: no such folder: {text}")
    return path


def _existing_file(text: str | None, base: Path, option: str) -> Path | None:
    if not text:
        return None
    path = (base / Path(text).expanduser()).resolve()
    if not path.is_file():
        raise pytest.UsageError(f"{option}: no such file: {text}")
    return path
