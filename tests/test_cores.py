"""building/cores.py and its users: the host's cores split between the timings and the builds
(--kb-build-cores=split), builds that then never stop for a timing, and a timing's threads moved
onto their reserved cores while it holds the device."""

from __future__ import annotations

import os
import subprocess
from types import SimpleNamespace

import pytest

from pytest_kernelbench.building import builds, cores, pool
from pytest_kernelbench.gpu import devices
from pytest_kernelbench.isolation.sandbox import Sandbox
from pytest_kernelbench.judge.evaluation import Evaluator

TWO_CORES = len(os.sched_getaffinity(0)) >= 2
needs_two_cores = pytest.mark.skipif(not TWO_CORES, reason="pinning needs two cores")


@pytest.fixture
def own_cores():
    """This thread's cores, given back after the test whatever it pinned."""
    before = os.sched_getaffinity(0)
    yield sorted(before)
    os.sched_setaffinity(0, before)


def test_each_gpu_gets_two_of_the_highest_cores_and_the_rest_are_shared():
    split = cores.split_cores(range(16), gpus=2)
    assert split.reserved == (frozenset({12, 13}), frozenset({14, 15}))
    assert split.shared == frozenset(range(12))
    assert split.for_timing(1) == frozenset({14, 15}) and split.for_timing(0) == {12, 13}


def test_a_host_too_small_to_split_says_so_in_one_line():
    with pytest.raises(cores.NoSplit, match="3 cores cannot reserve 2 for each of 1 GPU"):
        cores.split_cores([0, 1, 2], gpus=1)


def test_only_split_on_a_cuda_device_splits():
    assert cores.split_for("pause", "cuda:0") is None
    with pytest.raises(cores.NoSplit, match="the device is cpu"):
        cores.split_for("split", "cpu")


def _affinity_build(tmp_path, name: str) -> builds.Build:
    """A planned "build" whose import writes the cores its build process may run on."""
    path = tmp_path / f"{name}.py"
    out = tmp_path / f"{name}.cores"
    path.write_text(f"# load_inline\nimport os\nopen({str(out)!r}, 'w').write("
                    "','.join(map(str, sorted(os.sched_getaffinity(0)))))\n")
    [build] = builds.plan([path], tmp_path / "cache", arch="")
    return build


@needs_two_cores
def test_split_builds_run_through_a_timing_on_the_shared_cores_alone(tmp_path, monkeypatch,
                                                                      own_cores):
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # this test's own host notices
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    split = cores.CoreSplit((frozenset(own_cores[-1:]),), frozenset(own_cores[:-1]))
    paused, free = _affinity_build(tmp_path, "paused"), _affinity_build(tmp_path, "free")
    with devices._timing():  # a timing under way on this host, as another process's would be
        assert devices.timing_in_progress()
        held_up = pool.BuildPool([paused], arch="", jobs=1, timeout_s=60).start()
        pool.BuildPool([free], arch="", jobs=1, timeout_s=60, split=split).start().close()
        assert free.status == "deferred" and paused.status == "pending"
    held_up.close()  # the timing over, the pausing pool builds too
    assert paused.status == "deferred"
    assert (tmp_path / "free.cores").read_text() == ",".join(map(str, sorted(split.shared)))
    assert os.sched_getaffinity(0) == set(own_cores)  # the pool's thread moved, not this one


@needs_two_cores
def test_a_timing_moves_its_thread_and_its_workers_onto_the_reserved_cores_and_back(own_cores):
    split = cores.CoreSplit((frozenset(own_cores[-1:]),), frozenset(own_cores[:-1]))
    worker = subprocess.Popen(["sleep", "30"])
    sandbox = Sandbox()
    sandbox.child_pid = worker.pid
    judge = SimpleNamespace(split=split, _timing_cores=None, device="cuda:0", sandbox=sandbox)
    try:
        cores.pin_thread(split.shared)
        with Evaluator._on_timing_cores(judge, exclusive=False):  # shared work stays put
            assert os.sched_getaffinity(0) == split.shared
        with Evaluator._on_timing_cores(judge, exclusive=True):
            assert os.sched_getaffinity(0) == split.reserved[0]
            assert os.sched_getaffinity(worker.pid) == split.reserved[0]
            with Evaluator._on_timing_cores(judge, exclusive=True):  # nested: left as it is
                pass
            assert os.sched_getaffinity(0) == split.reserved[0]
        assert os.sched_getaffinity(0) == split.shared
        assert os.sched_getaffinity(worker.pid) == split.shared
        assert sandbox.worker_cores == split.shared  # and so a worker started later
    finally:
        worker.kill()
        worker.wait()
        sandbox.child_pid = None  # not the zygote's: nothing for close() to stop
        sandbox.close()


def test_without_a_split_a_stage_pins_nothing(own_cores):
    judge = SimpleNamespace(split=None, _timing_cores=None, device="cuda:0", sandbox=None)
    with Evaluator._on_timing_cores(judge, exclusive=True):
        assert os.sched_getaffinity(0) == set(own_cores)


def test_the_session_refuses_a_split_on_the_cpu_as_the_plugin_does():
    from pytest_kernelbench import Session

    with pytest.raises(ValueError, match="--kb-build-cores=split: the device is cpu"):
        Session(device="cpu", build_cores="split")


@needs_two_cores
def test_a_closed_judge_gives_its_thread_its_cores_back(own_cores):
    # Session.evaluate judges in its caller's thread: the split must not outlive the session.
    split = cores.CoreSplit((frozenset(own_cores[-1:]),), frozenset(own_cores[:-1]))
    closed = SimpleNamespace(close=lambda: None)
    judge = SimpleNamespace(split=split, _cores_before=frozenset(own_cores),
                            membership=closed, sandbox=closed)
    cores.pin_thread(split.shared)
    Evaluator.close(judge)
    assert os.sched_getaffinity(0) == set(own_cores)
