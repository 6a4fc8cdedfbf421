from __future__ import annotations

import json
from pathlib import Path

import pytest

# Imported once here: in-process inner runs restore sys.modules afterwards, and a C extension
# like torch (or a torch module that registers operators) cannot be imported a second time into
# the same interpreter.
import torch  # noqa: F401

from pytest_kernelbench import record


def pytest_configure(config: pytest.Config) -> None:
    # Only when this suite runs: a `pytest --kb-...` run from the repository's root loads this
    # file too (testpaths), and these imports cost every one of its processes seconds.
    if config.args_source == pytest.Config.ArgsSource.ARGS:
        import torch._dynamo  # noqa: F401
        import torch.utils.flop_counter  # noqa: F401

EXAMPLES = Path(__file__).parent / "examples"


class KernelBenchRunner:
    """Runs an inner pytest over the example problems with chosen candidate sets."""

    def __init__(self, pytester: pytest.Pytester):
        self.pytester = pytester
        self.plugin_args = ["-p", "pytest_kernelbench.plugin.hooks", "-p", "pytest_benchmark.plugin"]

    def run(self, *sets: str, args: tuple[str, ...] = (), problems: str = "problems"):
        argv = [*self.plugin_args, f"--kb-problems={EXAMPLES / problems}", "--kb-report=report.json",
                "--benchmark-max-time=0.001", "--benchmark-min-rounds=2", "-p", "no:cacheprovider",
                f"--kb-build-cache={self.pytester.path / 'kb-builds'}"]
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
        return {(r["candidate_set"], r["problem_id"], r["sample"]): r
                for r in self.report()["results"]}


@pytest.fixture
def kb(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> KernelBenchRunner:
    # Inner runs see only this plugin and the ones a test names, not whatever is installed.
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    return KernelBenchRunner(pytester)
