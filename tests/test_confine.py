from __future__ import annotations

import json
import os
import pwd
import shutil
import signal
import socket
import sys
from pathlib import Path

import pytest

from pytest_kernelbench import confine

EXAMPLES = Path(__file__).parent / "examples"
ESCAPES = EXAMPLES / "candidates" / "escapes"
# The account's home: confined processes get a $HOME in their scratch folder, and pytester
# moves $HOME for the tests.
REAL_HOME = Path(pwd.getpwuid(os.getuid()).pw_dir)
needs_landlock = pytest.mark.skipif(confine.landlock_abi() < 6,
                                    reason="needs Landlock ABI 6 (Linux 6.12 or later)")

POLICY = confine.Policy(read=("/usr", "/work/sets/a/1.py"), write=("/scratch", "/cache/abc"),
                        protected=("/work/sets", "/cache"), scratch="/scratch")


@pytest.mark.parametrize(("event", "args", "attempt"), [
    ("open", ("/work/problems/1.py", "w", 0), "write /work/problems/1.py"),
    ("open", ("/work/problems/1.py", "r", 0), None),  # problems are not secret
    ("open", ("/work/sets/b/2.py", "r", os.O_RDONLY), "read /work/sets/b/2.py"),
    ("open", ("/work/sets/a/1.py", "r", os.O_RDONLY), None),  # its own file
    ("open", ("/cache/abc/x.so", None, os.O_RDWR | os.O_CREAT), None),  # its own build
    ("open", ("/cache/def/x.so", None, os.O_WRONLY), "write /cache/def/x.so"),
    ("open", ("/scratch/tmp/x", "wb", 0), None),
    ("open", ("/dev/null", "w", 0), None),
    ("open", (3, "w", 0), None),  # an open descriptor was allowed when it was opened
    ("os.remove", ("/work/problems/1.py", -1), "remove /work/problems/1.py"),
    ("os.rename", ("/scratch/a", "/work/x", -1, -1), "rename /work/x"),
    ("os.kill", (1, signal.SIGTERM), "signal 15 to process 1"),
    ("os.kill", (0, signal.SIGTERM), None),  # its own group
    ("os.killpg", (77, signal.SIGKILL), None),  # its own group (77 below)
    ("os.killpg", (78, signal.SIGKILL), "signal 9 to process 78"),
    ("os.listdir", ("/work/sets",), None),  # the import system lists folders on sys.path
])
def test_attempts_are_judged_against_the_policy(event, args, attempt):
    assert confine.judge(POLICY, event, args, pid=76, group=77) == attempt


def test_tcp_and_udp_traffic_is_an_attempt_unix_sockets_are_not():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp, \
            socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as unix:
        assert confine.judge(POLICY, "socket.sendto", (udp, ("8.8.8.8", 53)), 1, 1) == \
            "sendto ('8.8.8.8', 53)"
        assert confine.judge(POLICY, "socket.connect", (unix, "/run/x.sock"), 1, 1) is None


def test_read_roots_leave_out_folders_that_hold_candidates(tmp_path):
    sets = tmp_path / "repo" / "candidates"
    sets.mkdir(parents=True)
    policy = confine.policy_for(sets / "a.py", None, tmp_path / "scratch",
                                tmp_path / "cache" / "abc", [sets, tmp_path / "cache"])
    assert str(sets.resolve() / "a.py") in policy.read
    assert not any(confine.beneath(str(sets.resolve()), root) for root in policy.read
                   if root != str(sets.resolve() / "a.py"))
    assert policy.write == (str((tmp_path / "scratch").resolve()),
                            str((tmp_path / "cache" / "abc").resolve()))
    assert confine.Policy.from_json(policy.to_json()) == policy


@needs_landlock
def test_the_kernel_refuses_every_route_once_a_process_is_confined(tmp_path):
    """Each route tried in a confined child without Python's help (os.open, raw sockets):
    refused by the kernel, not merely reported."""
    own = tmp_path / "sets" / "a.py"
    other = tmp_path / "sets" / "b.py"
    own.parent.mkdir()
    own.write_text("own")
    other.write_text("other")
    build = tmp_path / "cache" / "abc"
    policy = confine.policy_for(own, None, tmp_path / "scratch", build,
                                [own.parent, tmp_path / "cache"])
    (tmp_path / "scratch").mkdir()
    listener = socket.create_server(("127.0.0.1", 0))
    routes = {
        "read own file": lambda: os.close(os.open(own, os.O_RDONLY)),
        "write own build": lambda: os.close(os.open(build / "x", os.O_WRONLY | os.O_CREAT)),
        "read another candidate": lambda: os.close(os.open(other, os.O_RDONLY)),
        "write another build": lambda: os.mkdir(tmp_path / "cache" / "def"),
        "write a test file": lambda: os.close(os.open(__file__, os.O_WRONLY | os.O_APPEND)),
        "write home": lambda: os.close(os.open(REAL_HOME / ".kb-x", os.O_WRONLY | os.O_CREAT)),
        "connect": lambda: socket.create_connection(listener.getsockname(), timeout=1),
        "signal the parent": lambda: os.kill(os.getppid(), 0),
    }
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: confine, try each route, say which the kernel refused
        try:
            os.close(read_end)
            confine.enter(policy)
            refused = {}
            for name, route in routes.items():
                try:
                    route()
                    refused[name] = False
                except OSError:
                    refused[name] = True
            os.write(write_end, json.dumps(refused).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        refused = json.loads(pipe.read())
    os.waitpid(pid, 0)
    listener.close()
    assert refused == {name: not name.endswith(("own file", "own build")) for name in routes}
    assert not (tmp_path / "cache" / "def").exists() and not (Path.home() / ".kb-x").exists()


@needs_landlock
def test_each_escape_is_refused_and_reported_and_nothing_changes(kb, monkeypatch, correct_and_timed):
    problems = kb.pytester.path / "problems"
    shutil.copytree(EXAMPLES / "problems", problems)
    relu = (problems / "level1" / "2_ReLU.py").read_text()
    plugin_source = Path(confine.__file__).parent / "reporting" / "scoring.py"
    touched = plugin_source.stat().st_mtime_ns
    report = kb.pytester.path / "report.json"
    monkeypatch.setenv("KB_ESCAPE_REPORT", str(report))
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    monkeypatch.setenv("KB_ESCAPE_PORT", str(listener.getsockname()[1]))
    signals: list[int] = []
    previous = signal.signal(signal.SIGUSR1, lambda number, frame: signals.append(number))
    try:
        result = kb.pytester.runpytest(
            *kb.plugin_args, f"--kb-problems={problems}", f"--kb-report={report}",
            f"--kb-candidates={ESCAPES}", "--kb-level=1", "--kb-trials=1", "--kb-p=0",
            f"--kb-build-cache={kb.pytester.path / 'kb-builds'}",
            "--benchmark-max-time=0.001", "-p", "no:cacheprovider")
    finally:
        signal.signal(signal.SIGUSR1, previous)
    result.stdout.fnmatch_lines(["kernelbench: candidates confined: Landlock ABI *"])
    records = {r["sample"]: r for r in kb.report()["results"] if r["problem_id"] == 2}
    tried = {
        "writes_problem": f"write {problems.resolve() / 'level1' / '2_ReLU.py'}",
        "writes_plugin": f"write {plugin_source.resolve()}",
        "writes_other_build": "mkdir ",
        "writes_report": f"write {report.resolve()}",
        "reads_other_candidate": f"read {(ESCAPES / 'level1' / '2_ReLU' / 'honest.py').resolve()}",
        "opens_socket": "connect ('127.0.0.1', ",
        "signals_harness": f"signal {int(signal.SIGUSR1)} to process {os.getpid()}",
        "writes_home": f"write {REAL_HOME.resolve() / '.kb-escape-marker'}",
    }
    for sample, attempt in tried.items():
        record = records[sample]
        assert record["status"] == "sandbox_violation", (sample, record["error"])
        assert f"tried to {attempt}" in record["error"] and "refused" in record["error"]
        assert record["confinement"].startswith("Landlock ABI")
    correct_and_timed(records["honest"])
    for sample in ("caches_in_home", "builds_in_home_cache", "builds_beside_itself"):
        correct_and_timed(records[sample])
    assert not (ESCAPES / "level1" / "2_ReLU" / "build").exists()
    # Nothing the attempts aimed at changed, and nothing reached the harness.
    assert (problems / "level1" / "2_ReLU.py").read_text() == relu
    assert plugin_source.stat().st_mtime_ns == touched
    assert not list((kb.pytester.path / "kb-builds").glob("*/planted.so"))
    assert not (REAL_HOME / ".kb-escape-marker").exists()
    assert signals == []
    with pytest.raises(BlockingIOError):
        listener.accept()
    listener.close()
    assert kb.report()["environment"]["confinement"].startswith("Landlock ABI")


def test_without_landlock_the_run_warns_and_require_stops(kb, monkeypatch):
    monkeypatch.setattr(confine, "landlock_abi", lambda: 0)
    result = kb.run("good", args=("--collect-only", "-k", "ReLU"))
    result.stdout.fnmatch_lines(["kernelbench: warning: candidates are not confined (this "
                                 "kernel offers no Landlock): they run with this process's "
                                 "rights"])
    result = kb.run("good", args=("--kb-confine=require",))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--kb-confine=require: this kernel offers no Landlock*"])


def test_confinement_can_be_switched_off(kb):
    result = kb.run("good", args=("--kb-confine=off", "--collect-only"))
    result.stdout.fnmatch_lines(["*candidates are not confined (--kb-confine=off)*"])


@needs_landlock
def test_a_candidate_that_rewrites_another_problem_is_refused_and_the_run_goes_on(kb):
    problems = kb.pytester.path / "problems"
    shutil.copytree(EXAMPLES / "problems", problems)
    softmax = (problems / "level1" / "3_WideSoftmax.py").read_text()
    result = kb.pytester.runpytest(
        *kb.plugin_args, f"--kb-problems={problems}", "--kb-report=report.json",
        f"--kb-candidates={EXAMPLES / 'candidates' / 'tampers'}", "--kb-level=1",
        "--kb-trials=1", "--kb-p=0", "--benchmark-max-time=0.001", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    record = kb.records()[("tampers", 2, "s0")]
    # It reads the other problem first: the kernel refuses that read, and the candidate,
    # which does not catch it, fails on it.
    assert record["status"] == "sandbox_violation"
    assert record["error"].startswith("refused by the sandbox: PermissionError")
    assert (problems / "level1" / "3_WideSoftmax.py").read_text() == softmax


def test_problems_and_candidates_the_harness_imported_add_no_read_root(tmp_path, monkeypatch):
    import types

    module = types.ModuleType("kb_problem_0123")
    module.__file__ = str(tmp_path / "problems" / "level1" / "3_WideSoftmax.py")
    monkeypatch.setitem(sys.modules, "kb_problem_0123", module)
    assert str(tmp_path / "problems" / "level1") not in confine.python_read_roots()
