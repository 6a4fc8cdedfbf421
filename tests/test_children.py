"""What the processes a candidate starts try: a refused attempt by a Python child (started, or
forked) is a violation like the candidate's own; every process started is on the record."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_kernelbench import confine, faults
from pytest_kernelbench.isolation import wire
from pytest_kernelbench.isolation.sandbox import Fault, Sandbox

EXAMPLES = Path(__file__).parent / "examples"
RELU = EXAMPLES / "problems" / "level1" / "2_ReLU.py"
CHILDREN = EXAMPLES / "candidates" / "children"
needs_landlock = pytest.mark.skipif(not confine.landlock_abi(),
                                    reason="this kernel offers no Landlock")


@pytest.mark.parametrize(("event", "args", "command"), [
    ("os.system", ("touch /x",), "touch /x"),
    ("subprocess.Popen", ("/bin/sh", ["sh", "-c", "echo a b"], None, None), "sh -c 'echo a b'"),
    ("os.posix_spawn", (b"/usr/bin/ninja", [b"ninja", b"-v"], {}), "ninja -v"),
    ("os.exec", ("/bin/ls", ("ls", Path("/tmp")), {}), "ls /tmp"),
    ("os.spawn", (os.P_WAIT, "/bin/true", ["true"], {}), "true"),
    ("pty.spawn", (["bash"],), "bash"),
    ("os.fork", (), "fork"),
    ("os.listdir", ("/tmp",), None),
    ("os.system", ("x" * 400,), "x" * 299 + "…"),
])
def test_each_way_of_starting_a_process_is_named_by_its_command(event, args, command):
    assert confine.started_command(event, args) == command


def test_a_python_child_of_a_watched_process_reports_to_its_file_what_it_tried_and_started(
        tmp_path):
    scratch, outside = tmp_path / "scratch", tmp_path / "outside.txt"
    scratch.mkdir()
    policy = confine.Policy(read=("/usr",), write=(str(scratch),), scratch=str(scratch))
    report = scratch / confine.CHILDREN_REPORT
    env = {**os.environ, "PYTHONPATH": confine.CHILD_STARTUP,
           confine.WATCH_ENV: json.dumps({"policy": policy.to_json(), "group": os.getpgrp(),
                                          "report": str(report)})}
    code = (f"import os\nopen({str(outside)!r}, 'w').close()\n"
            f"open({str(scratch / 'mine.txt')!r}, 'w').close()\nos.system('true')\n")
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    lines = [json.loads(line) for line in report.read_text().splitlines()]
    # Not watched by the kernel here: the watch reports the write all the same.
    assert lines == [{"attempt": f"write {outside.resolve()}"}, {"started": "true"}]


def _load(sandbox: Sandbox, sample: str) -> object:
    candidate = CHILDREN / "level1" / "2_ReLU" / f"{sample}.py"
    loading = wire.Loading(problem=str(RELU), candidate=str(candidate), seed=42, device="cpu",
                           mode="train", precision="fp32", tf32="off")
    return sandbox.request(wire.Load(loading), timeout_s=60.0)


@pytest.fixture
def target(tmp_path, monkeypatch) -> Path:
    """The file outside every folder of the worker that the candidates' children write."""
    path = tmp_path / "outside.txt"
    monkeypatch.setenv("KB_CHILD_TARGET", str(path))  # the worker inherits the environment
    return path


@needs_landlock
@pytest.mark.parametrize("sample", ["python_child", "double_fork"])
def test_a_write_refused_to_a_python_child_or_a_double_forked_grandchild_is_a_violation(
        target, sample):
    sandbox = Sandbox(device="cpu", confine_mode="auto", protected=(CHILDREN,))
    try:
        fault = _load(sandbox, sample)
        started = sandbox.started
    finally:
        sandbox.close()
    assert isinstance(fault, Fault) and fault.status == faults.SANDBOX_VIOLATION, fault
    assert fault.message.startswith(f"candidate tried to write {target.resolve()}; refused")
    assert not target.exists()
    if sample == "double_fork":
        assert started == ["fork"]
    else:
        assert len(started) == 1 and started[0].startswith(f"{sys.executable} -c ")


@needs_landlock
def test_a_shells_refused_write_is_not_seen_but_its_command_is_on_the_reply(target):
    sandbox = Sandbox(device="cpu", confine_mode="auto", protected=(CHILDREN,))
    try:
        reply = _load(sandbox, "shell_child")
        started = sandbox.started
    finally:
        sandbox.close()
    assert not isinstance(reply, Fault), reply
    assert started == [f"touch {target} 2>/dev/null"]
    assert not target.exists()  # refused by the kernel all the same


@needs_landlock
def test_a_candidate_whose_child_reads_and_writes_where_it_may_is_no_violation(target, kb, correct_and_timed):
    problems = kb.pytester.path / "problems"
    shutil.copytree(EXAMPLES / "problems", problems)
    kb.pytester.runpytest(
        *kb.plugin_args, f"--kb-problems={problems}", "--kb-report=report.json",
        f"--kb-candidates={CHILDREN}", "--kb-level=1", "--kb-trials=1", "--kb-p=0",
        f"--kb-build-cache={kb.pytester.path / 'kb-builds'}", "--benchmark-max-time=0.001",
        "-p", "no:cacheprovider")
    records = {r["sample"]: r for r in kb.report()["results"] if r["problem_id"] == 2}
    honest = records["harmless_child"]
    correct_and_timed(honest)
    # Its own child, and nothing the harness started in its worker through the stages.
    (command,) = honest["started_processes"]
    assert command.startswith(f"{sys.executable} -c ")
    correct_and_timed(records["shell_child"])
    assert records["shell_child"]["started_processes"] == [f"touch {target} 2>/dev/null"]
    for sample in ("python_child", "double_fork"):
        assert records[sample]["status"] == "sandbox_violation", records[sample]["error"]
        assert records[sample]["started_processes"], sample
    assert not target.exists()
