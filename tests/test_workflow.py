"""The GitHub Actions workflow: well formed, its options exist, its merge steps work."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import yaml

from pytest_kernelbench.reporting import cli

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "kernelbench.yml"
DROP_IN = ROOT / "docs" / "kernelbench-workflow.yml"  # the same, for other repositories
OPTIONS = (ROOT / "pytest_kernelbench" / "settings.py").read_text()


def load(path: Path = WORKFLOW) -> dict:
    return yaml.safe_load(path.read_text())


def test_the_drop_in_copy_is_the_workflow_with_the_plugin_from_its_package():
    ours, theirs = load(), load(DROP_IN)
    assert ours["env"].pop("KB_PACKAGE") == "."
    assert theirs["env"].pop("KB_PACKAGE") == "pytest-kernelbench"
    assert ours == theirs
    installs = [command for job in ours["jobs"].values() for command in runs(job)
                if "pip install" in command]
    assert len(installs) == 2 and all('"$KB_PACKAGE"' in command for command in installs)


def runs(job: dict) -> list[str]:
    return [step["run"] for step in job["steps"] if "run" in step]


def test_the_workflow_shards_on_gpu_runners_and_merges_after_them():
    workflow = load()
    shard, merge = workflow["jobs"]["shard"], workflow["jobs"]["merge"]
    assert shard["runs-on"] == ["self-hosted", "gpu"]
    assert shard["strategy"]["matrix"]["shard"] == \
        list(range(1, int(workflow["env"]["SHARDS"]) + 1))
    assert merge["needs"] == "shard" and merge["if"] == "always()"
    used = set(re.findall(r"--kb-[a-z-]+", " ".join(runs(shard))))
    assert used and all(f'"{option}"' in OPTIONS for option in used), used
    # The merge job reads what the shard jobs upload.
    uploaded = next(s for s in shard["steps"] if s.get("uses", "").startswith(
        "actions/upload-artifact"))["with"]["name"]
    downloaded = next(s for s in merge["steps"] if s.get("uses", "").startswith(
        "actions/download-artifact"))["with"]["pattern"]
    assert re.fullmatch(downloaded.replace("*", ".*"), uploaded.replace(
        "${{ matrix.shard }}", "1"))


def test_the_merge_jobs_commands_run_on_shard_reports(kb, monkeypatch, capsys):
    reports = kb.pytester.path / "reports"
    reports.mkdir()
    for index in (1, 2):
        kb.run("good", args=("--kb-trials=1", "--kb-p=0", f"--kb-shard={index}/2"))
        shutil.copy(kb.pytester.path / "report.json", reports / f"shard-{index}.json")
    monkeypatch.chdir(kb.pytester.path)
    steps = [command for command in runs(load()["jobs"]["merge"])
             if command.startswith("kernelbench-report")]
    assert len(steps) == 4  # summary, plots and the gate after the merge
    for command in steps:
        argv = shlex.split(command.split(">>")[0])[1:]
        argv = [str(path) for arg in argv
                for path in (sorted(Path().glob(arg)) if "*" in arg else [arg])]
        code = cli.main(argv)
        # The gate asks every candidate of the set to be correct: the example set has a
        # problem without one.
        assert code == (1 if "--fail-under" in argv else 0), command
    assert "| good" in capsys.readouterr().out
    assert sorted(p.name for p in (kb.pytester.path / "reports" / "plots").iterdir()) == \
        ["fast_p.png", "speed_of_light.png", "speedup.png"]


def test_plots_are_written_for_a_run_and_from_reports(kb, tmp_path):
    from pytest_kernelbench.reporting import cli

    result = kb.run("good", "slightly_off", args=("--kb-p=0", "--kb-trials=1",
                                                  f"--kb-plot={tmp_path / 'run'}"))
    result.stdout.fnmatch_lines(["kernelbench plots: *speedup.png*fast_p.png*speed_of_light.png"])
    names = ("speedup.png", "fast_p.png", "speed_of_light.png")
    for name in names:
        assert (tmp_path / "run" / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert cli.main(["plot", "-o", str(tmp_path / "again"),
                     str(kb.pytester.path / "report.json")]) == 0
    assert sorted(p.name for p in (tmp_path / "again").iterdir()) == sorted(names)
