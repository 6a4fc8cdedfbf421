from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import pytest

# Imported once here: in-process inner runs restore sys.modules afterwards, and a C extension
# like torch (or a torch module that registers operators) cannot be imported a second time into
# the same interpreter.
import torch  # noqa: F401

from pytest_kernelbench import record
from pytest_kernelbench.building import builds, pch


def pytest_configure(config: pytest.Config) -> None:
    # Only when this suite runs: a `pytest --kb-...` run from the repository's root loads this
    # file too (testpaths), and these imports cost every one of its processes seconds.
    if config.args_source == pytest.Config.ArgsSource.ARGS:
        import torch._dynamo  # noqa: F401
        import torch.utils.flop_counter  # noqa: F401

EXAMPLES = Path(__file__).parent / "examples"


class SharedRun:
    """An inner run's output and report, kept for every test that reads the same run."""

    def __init__(self, result: pytest.RunResult, document: dict, files: dict[str, str],
                 kept: list[str]):
        self.result = result
        self.document = document
        self.files = files  # name -> text of the other files the run wrote that tests read
        self.kept = kept  # the names of the copies the run kept in its report's history

    def report(self) -> dict:
        return copy.deepcopy(self.document)

    def records(self) -> dict[tuple[str, int, str], dict]:
        return records_by_case(self.report())


def records_by_case(document: dict) -> dict[tuple[str, int, str], dict]:
    """(set, problem id, sample) -> record."""
    return {(r["candidate_set"], r["problem_id"], r["sample"]): r for r in document["results"]}


class TorchHeaders:
    """The precompiled torch header of the example candidates' C++ builds (no flags of their
    own), made on first use and shared by the session's builds as the builds of one run share
    it (building/pch.py): each C++ file then compiles in about half the time."""

    def __init__(self, root: Path):
        self.root = root
        self._folder: Path | None = None
        self._tried = False

    def folder(self) -> Path | None:
        """The folder holding torch/extension.h.gch (None where it cannot be made)."""
        if not self._tried:
            self._tried = True
            command = pch.torch_command([], with_cuda=False)
            if command is not None:
                pch.Headers(self.root, [command]).wait()
                self._folder = pch.include_folder(self.root, command)
        return self._folder

    def link_into(self, cache_root: Path) -> None:
        """Give a run's build cache the header (a hard link: the file is 0.8 GB)."""
        folder = self.folder()
        if folder is None:
            return
        target = cache_root / builds.HEADERS_FOLDER / folder.name / pch.PRECOMPILED
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists():
            try:
                (target.parent / pch.HEADER.name).symlink_to(os.readlink(folder / pch.HEADER))
                os.link(folder / pch.PRECOMPILED, target)
            except OSError:
                pass  # another file system: the run builds without it


@pytest.fixture
def correct_and_timed():
    """A check for the record of an honest candidate whose speed a test does not judge: correct,
    and `passed`, or `inconclusive` where the harness's clock could not settle the time on a
    host too busy for it (a CPU running the whole suite), which says nothing of the candidate."""
    def check(record: dict) -> None:
        assert (record.get("verdicts") or {}).get("correct") == "passed", record["error"]
        if record["status"] == "inconclusive":
            assert busy_host_skip(record), record.get("flags")
        else:
            assert record["status"] == "passed", record["error"]
    return check


@pytest.fixture
def timed():
    """A check that an honest candidate's record has a speedup, or none only where the
    harness's clock could not settle the time on a host too busy for it (p=0 still passes)."""
    def check(record: dict) -> None:
        if record["speedup"] is None:
            assert any("(a busy host)" in flag for flag in record.get("flags") or []), record
        else:
            assert record["speedup"] > 0, record
    return check


def busy_host_skip(record: dict) -> bool:
    """A speed item skipped because the harness's clock could not settle the time on a host
    too busy for it: a CPU running the whole suite, not the candidate."""
    return record["status"] == "inconclusive" and any(
        f.startswith("inconclusive") and "(a busy host)" in f for f in record.get("flags") or [])


@pytest.fixture(scope="session")
def torch_headers(tmp_path_factory: pytest.TempPathFactory) -> TorchHeaders:
    return TorchHeaders(tmp_path_factory.mktemp("torch-headers"))


class KernelBenchRunner:
    """Runs an inner pytest over the example problems with chosen candidate sets."""

    def __init__(self, pytester: pytest.Pytester, shared: dict[tuple, SharedRun],
                 headers: TorchHeaders):
        self.pytester = pytester
        self.plugin_args = ["-p", "pytest_kernelbench.plugin.hooks", "-p", "pytest_benchmark.plugin"]
        self.shared = shared
        self.headers = headers

    def run(self, *sets: str, args: tuple[str, ...] = (), problems: str = "problems"):
        cache = self.pytester.path / "kb-builds"
        if any(builds.needs_build(path.read_text()) for name in sets
               for path in (EXAMPLES / "candidates" / name).rglob("*.py")):
            self.headers.link_into(cache)
        argv = [*self.plugin_args, f"--kb-problems={EXAMPLES / problems}", "--kb-report=report.json",
                "--benchmark-max-time=0.001", "--benchmark-min-rounds=2", "-p", "no:cacheprovider",
                f"--kb-build-cache={cache}"]
        argv += [f"--kb-candidates={EXAMPLES / 'candidates' / name}" for name in sets]
        return self.pytester.runpytest(*argv, *args)

    def report(self) -> dict:
        """The run's JSON report, checked against the schema the package ships."""
        document = json.loads((self.pytester.path / "report.json").read_text())
        import jsonschema  # a dev dependency: evaluation runs in this clone load this file too

        jsonschema.validate(document, record.schema())
        return document

    def records(self) -> dict[tuple[str, int, str], dict]:
        """(set, problem id, sample) -> record."""
        return records_by_case(self.report())

    def run_shared(self, *sets: str, args: tuple[str, ...] = (), problems: str = "problems",
                   keep: tuple[str, ...] = ()) -> SharedRun:
        """The same inner run as `run`, made once for all the tests that ask for it.

        Tests that each check one part of the same run read one run: it is the slow part of
        each, and a verdict does not depend on which test asked for it first.
        """
        key = (tuple(self.plugin_args), sets, args, problems, keep)
        if key not in self.shared:
            result = self.run(*sets, args=args, problems=problems)
            files = {name: (self.pytester.path / name).read_text() for name in keep}
            kept = sorted(path.name for path in (self.pytester.path / "history" / "report").glob("*"))
            self.shared[key] = SharedRun(result, self.report(), files, kept)
        return self.shared[key]


@pytest.fixture(scope="session")
def shared_runs() -> dict[tuple, SharedRun]:
    return {}


@pytest.fixture
def kb(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
       shared_runs: dict[tuple, SharedRun], torch_headers: TorchHeaders) -> KernelBenchRunner:
    # Inner runs see only this plugin and the ones a test names, not whatever is installed.
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    return KernelBenchRunner(pytester, shared_runs, torch_headers)
