from __future__ import annotations

import fcntl
import multiprocessing
import os
import tempfile
import threading
import time

import pytest

from pytest_kernelbench.gpu import devices
from pytest_kernelbench.gpu.devices import (
    TimingRequest,
    bind_device,
    device_lock,
    gate_is_closed,
    lock_path,
    pending_timings,
    timing_batch,
    visible_id,
    worker_device,
    worker_env,
)


@pytest.mark.parametrize(("device", "worker", "count", "expected"), [
    ("cuda", None, 4, "cuda"),          # not under xdist
    ("cuda", "gw0", 4, "cuda:0"),
    ("cuda", "gw5", 4, "cuda:1"),       # more workers than GPUs: they share, round robin
    ("cuda", "gw3", 1, "cuda:0"),       # one GPU, N workers
    ("cuda:2", "gw0", 4, "cuda:2"),     # an explicit index is kept
    ("cpu", "gw1", 0, "cpu"),
])
def test_xdist_workers_are_spread_over_the_gpus(device, worker, count, expected):
    assert bind_device(device, worker, count) == expected


def test_lock_files_name_the_physical_device(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,5")
    assert lock_path("cuda:1").name == "pytest-kernelbench-cuda-visible-5.lock"
    assert lock_path("cpu").name == "pytest-kernelbench-cpu.lock"
    assert lock_path("cuda") == lock_path("cuda:0") != lock_path("cuda:1")


def test_a_plain_run_and_an_xdist_run_on_one_gpu_share_its_lock(monkeypatch):
    # A plain run names its GPU `cuda`, an xdist worker `cuda:0`: one device, one lock, so a
    # timing of either holds it alone against both.
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert lock_path("cuda") == lock_path("cuda:0")
    assert lock_path("cuda:1").name == "pytest-kernelbench-cuda1.lock"


@pytest.mark.parametrize(("device", "visible", "expected"), [
    ("cuda:1", None, "1"),                  # every GPU visible: the index is the GPU
    ("cuda", None, "0"),
    ("cuda:1", "3,5", "5"),                 # the parent sees a subset: its entry for cuda:1
    ("cuda:0", "GPU-8f1c,GPU-77aa", "GPU-8f1c"),  # UUIDs stay UUIDs
])
def test_a_sandbox_worker_sees_exactly_its_pytest_process_gpu(device, visible, expected):
    assert visible_id(device, visible) == expected


def test_sandbox_workers_of_a_cuda_process_see_one_gpu_as_cuda0(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,3")
    assert worker_env("cuda:1") == {"CUDA_VISIBLE_DEVICES": "3"}
    assert worker_device("cuda:1") == "cuda:0"
    assert worker_env("cpu") == {}
    assert worker_device("cpu") == "cpu"


def test_timing_holds_the_device_alone(tmp_path, monkeypatch):
    monkeypatch.setattr("tempfile.gettempdir", lambda: str(tmp_path))
    with device_lock("cuda:0", exclusive=True):
        with open(lock_path("cuda:0"), "a+") as other:
            with pytest.raises(BlockingIOError):
                fcntl.flock(other, fcntl.LOCK_SH | fcntl.LOCK_NB)
    with device_lock("cuda:0", exclusive=False):
        with open(lock_path("cuda:0"), "a+") as other:
            fcntl.flock(other, fcntl.LOCK_SH | fcntl.LOCK_NB)  # ordinary work shares it
            with pytest.raises(BlockingIOError):
                fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)


def test_a_waiting_timing_is_not_starved_by_work_that_keeps_sharing_the_device(tmp_path,
                                                                             monkeypatch):
    # Two workers compile and check in overlapping turns, so the device is never free of a
    # shared hold; a timing asks meanwhile and must get it once the holds before it end.
    monkeypatch.setattr("tempfile.gettempdir", lambda: str(tmp_path))
    assert _timing_beside_sharing(batch=1) < 1.0


def _timing_beside_sharing(batch: int) -> float:
    """Seconds a timing waits for the device while two workers share it in overlapping turns."""
    stop = threading.Event()

    def share() -> None:
        while not stop.is_set():
            with device_lock("cuda:0", exclusive=False):
                time.sleep(0.05)

    workers = [threading.Thread(target=share) for _ in range(2)]
    for worker in workers:
        worker.start()
        time.sleep(0.02)  # staggered, so their holds overlap
    began = time.perf_counter()
    with device_lock("cuda:0", exclusive=True, batch=batch):
        waited = time.perf_counter() - began
    stop.set()
    for worker in workers:
        worker.join()
    return waited


def _hold_later(spans: dict[str, tuple[float, float]], name: str, exclusive: bool,
                after_s: float, for_s: float, batch: int = 1) -> threading.Thread:
    """A thread that asks for the device after_s from now, holds it for_s and notes when."""
    def run() -> None:
        time.sleep(after_s)
        with device_lock("cuda:0", exclusive=exclusive, batch=batch):
            began = time.perf_counter()
            time.sleep(for_s)
            spans[name] = (began, time.perf_counter())
    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_timings_that_ask_while_the_device_drains_run_before_the_shared_work_after_them(
        tmp_path, monkeypatch):
    # A shared hold drains; a timing asks meanwhile, then more shared work, then a second
    # timing. The timings run back to back and the shared work after both: it does not come
    # in between and make the second timing wait for a drain of its own.
    monkeypatch.setattr("tempfile.gettempdir", lambda: str(tmp_path))
    spans: dict[str, tuple[float, float]] = {}
    for trial in range(3):
        threads = [_hold_later(spans, "drain", False, 0.0, 0.3),
                   _hold_later(spans, "first", True, 0.05, 0.1),
                   _hold_later(spans, "after", False, 0.1, 0.05),
                   _hold_later(spans, "second", True, 0.15, 0.1)]
        for thread in threads:
            thread.join()
        assert spans["after"][0] >= max(spans["first"][1], spans["second"][1]), (trial, spans)
        assert spans["first"][0] >= spans["drain"][1] and spans["second"][0] >= spans["drain"][1]


@pytest.mark.parametrize(("pending", "closed"), [
    ([], False),                          # no timing asked
    ([(99.0, 4)], False),                 # one gathers, young: shared work goes on
    ([(99.0, 4), (99.5, 4)], False),
    ([(97.0, 4)], True),                  # the oldest has waited GATHER_S (3 s)
    ([(99.0, 2), (99.5, 2)], True),       # a batch has gathered
    ([(0.0, 4)], True),                   # one is queued for the device or holds it
    ([(99.9, 1)], True),                  # one worker on the device: each timing at once
])
def test_the_timing_gate_closes_once_timings_gathered(pending, closed):
    assert gate_is_closed(pending, now=100.0) is closed


@pytest.mark.parametrize(("workers", "gpus", "batch"), [
    (1, 1, 1), (2, 1, 1), (3, 1, 1), (8, 1, 4), (16, 1, 8), (8, 2, 2), (4, 2, 1), (5, 2, 1),
])
def test_half_of_the_workers_on_a_device_gather_their_timings(workers, gpus, batch):
    assert timing_batch(workers, gpus) == batch


def _ask_for_a_timing_and_die(path) -> None:
    TimingRequest(path, batch=3)
    os._exit(0)  # as a killed process goes: its lock with it, its file left behind


def test_a_timing_request_of_a_process_that_died_is_dropped(tmp_path):
    path = tmp_path / "dev.lock"
    live = TimingRequest(path, batch=3)
    dead = multiprocessing.get_context("fork").Process(target=_ask_for_a_timing_and_die,
                                                       args=(path,))
    dead.start()
    dead.join()
    assert len(list(path.with_suffix(".pending").iterdir())) == 2
    assert [batch for _, batch in pending_timings(path)] == [3]
    assert len(list(path.with_suffix(".pending").iterdir())) == 1
    live.close()
    assert pending_timings(path) == []


def test_timings_gather_while_shared_work_goes_on_and_run_after_one_drain(tmp_path, monkeypatch):
    # Gathering for two timings: shared work that asks after the first timing still starts;
    # once the second asks, shared work that asks after it waits, and both timings run back to
    # back after the holds in progress end.
    monkeypatch.setattr("tempfile.gettempdir", lambda: str(tmp_path))
    spans: dict[str, tuple[float, float]] = {}
    threads = [_hold_later(spans, "drain", False, 0.0, 0.5, batch=2),
               _hold_later(spans, "first", True, 0.05, 0.1, batch=2),
               _hold_later(spans, "beside", False, 0.15, 0.1, batch=2),
               _hold_later(spans, "second", True, 0.35, 0.1, batch=2),
               _hold_later(spans, "after", False, 0.45, 0.05, batch=2)]
    for thread in threads:
        thread.join()
    assert spans["beside"][1] <= spans["drain"][1]  # started and ended while the first gathered
    first, second = sorted([spans["first"], spans["second"]])
    assert first[0] >= spans["drain"][1] and second[0] - first[1] < 0.1  # one drain, back to back
    assert spans["after"][0] >= second[1]


def test_a_lone_timing_that_gathers_gets_the_device_after_gather_s(tmp_path, monkeypatch):
    monkeypatch.setattr("tempfile.gettempdir", lambda: str(tmp_path))
    monkeypatch.setattr("pytest_kernelbench.gpu.devices.GATHER_S", 0.3)
    assert 0.25 < _timing_beside_sharing(batch=4) < 1.0


def test_a_hold_nested_in_one_held_does_not_wait_behind_a_timing(tmp_path, monkeypatch):
    monkeypatch.setattr("tempfile.gettempdir", lambda: str(tmp_path))
    with device_lock("cuda:0", exclusive=False):
        timing = threading.Thread(target=lambda: device_lock("cuda:0", True).__enter__())
        timing.daemon = True
        timing.start()  # queues at the turnstile, then waits for the hold above
        time.sleep(0.2)
        began = time.perf_counter()
        with device_lock("cuda:0", exclusive=False):  # the compile inside a correct stage
            assert time.perf_counter() - began < 0.5


@pytest.fixture
def private_locks(tmp_path, monkeypatch):
    """This test's device locks and host notices in its own folder, here and in the processes
    it starts: another suite on the same host must neither hold nor see them."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    return tmp_path


def _relu_that_says_it_builds(folder):
    """A ReLU candidate whose source names load_inline, so it is treated as one that builds
    (it builds nothing)."""
    candidate = folder / "2_ReLU.py"
    candidate.write_text("# builds with torch.utils.cpp_extension.load_inline (not here)\n"
                         "import torch\n\nclass ModelNew(torch.nn.Module):\n"
                         "    def forward(self, x):\n        return torch.relu(x)\n")
    return candidate


def _cpu_device_free() -> bool:
    """Whether nobody holds the CPU device's lock now (it could be taken alone)."""
    with open(lock_path("cpu"), "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        fcntl.flock(handle, fcntl.LOCK_UN)
        return True


def test_a_compile_item_waits_for_its_build_without_holding_the_device(tmp_path, private_locks,
                                                                       correct_and_timed):
    # A build can take a minute; holding the device meanwhile would keep a timing (and all work
    # queued behind it on the turnstile) waiting as long.
    from pathlib import Path

    from pytest_kernelbench import Session

    relu = Path(__file__).parent / "examples" / "problems" / "level1" / "2_ReLU.py"
    candidate = _relu_that_says_it_builds(tmp_path)
    free_while_waiting = []

    def wait_for_build(folder) -> None:
        free_while_waiting.append(_cpu_device_free())
        time.sleep(0.3)

    with Session(device="cpu", trials=1, time_budget_s=0.05, p=0.0) as session:
        session.evaluator.wait_for_build = wait_for_build
        result = session.evaluate(relu, candidate)
    assert free_while_waiting == [True]
    correct_and_timed(result)
    assert result["harness_s"]["build_wait"] >= 0.3
    assert result["harness_s"]["lock_wait"] >= 0


def test_a_hold_steps_aside_for_an_exclusive_holder_and_notes_the_span(private_locks):
    with device_lock("cpu", exclusive=False) as hold:
        assert hold.step_aside()
        with device_lock("cpu", exclusive=True):  # another holder gets the device meanwhile
            pass
        hold.step_back()
        assert hold.held and len(hold.aside) == 1 and len(hold.aside[0]) == 2


def _timing_once_there_is(marker, seen: dict[str, float], name: str,
                          hold_s: float) -> threading.Thread:
    """A timing of another process, started: once `marker` exists it notes the time as `name`,
    takes the CPU's device lock alone for hold_s and notes when it had it ('taken', 'released').
    It gives up after a minute (the test's assertions then say what never happened)."""
    def run() -> None:
        deadline = time.monotonic() + 60
        while not marker.exists():
            if time.monotonic() > deadline:
                return
            time.sleep(0.01)
        seen[name] = time.time()
        with device_lock("cpu", exclusive=True):
            seen["taken"] = time.time()
            time.sleep(hold_s)
            seen["released"] = time.time()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_the_device_is_let_go_while_the_worker_waits_on_a_compiler(tmp_path, private_locks,
                                                                   correct_and_timed):
    # A build at import (or at first call) can take a minute: the stage lets the device go
    # meanwhile, and stops the worker until it holds the device again.
    from pathlib import Path

    from pytest_kernelbench import Session

    relu = Path(__file__).parent / "examples" / "problems" / "level1" / "2_ReLU.py"
    started = tmp_path / "build_started"
    compiler = tmp_path / "ninja"  # a stand-in for a build: its process is named ninja
    ticks = tmp_path / "ticks"  # the compiler's own record of when it ran
    compiler.write_text(f"#!/bin/sh\ntouch {started}\n"
                        f"for i in $(seq 120); do date +%s.%N >> {ticks}; sleep 0.01; done\n")
    compiler.chmod(0o755)
    went_on = tmp_path / "went_on"
    candidate = tmp_path / "2_ReLU.py"
    candidate.write_text(
        "# builds as torch.utils.cpp_extension would, in a compiler process\n"
        "import subprocess, time\nimport torch\n"
        f"subprocess.run([{str(compiler)!r}], check=True)\n"
        "time.sleep(0.5)  # the worker is stopped within this\n"
        f"open({str(went_on)!r}, 'w').write(repr(time.time()))\n\n"
        "class ModelNew(torch.nn.Module):\n"
        "    def forward(self, x):\n        return torch.relu(x)\n")
    seen: dict[str, float] = {}

    other = _timing_once_there_is(started, seen, "build", hold_s=1.5)
    # drain=wait: with stop, the timing could stop the worker before its compiler is seen
    with Session(device="cpu", trials=1, time_budget_s=0.05, p=0.0, confine="off",
                 drain="wait") as session:
        # Only a GPU's stages step aside (on a CPU the compiler would share the timing's cores):
        # turned on here to run the same code on the CPU.
        session.evaluator.sandbox.steps_aside = True
        result = session.evaluate(relu, candidate)
    other.join()
    correct_and_timed(result)
    assert "build" in seen, "the stand-in compiler never started"
    assert seen["taken"] - seen["build"] < 0.9  # while the compiler ran
    (start, end), = result["aside"]["compile"]
    assert end >= seen["released"] and start <= seen["taken"]
    assert float(went_on.read_text()) >= seen["released"]  # stopped until the device was back
    # While the timing ran, the compiler was stopped too: it ran on afterwards.
    stamps = [float(line) for line in ticks.read_text().split()]
    assert not [t for t in stamps if seen["taken"] + 0.05 < t < seen["released"]]
    assert len(stamps) == 120 and stamps[-1] > seen["released"]


def test_a_shared_stage_lets_a_waiting_timing_in_between_two_requests(tmp_path, monkeypatch,
                                                                      correct_and_timed):
    # Each correctness trial's forward takes 0.3 s: a timing that asks during the first one
    # gets the device when that request ends, not when the stage ends, and the worker stays
    # stopped until the stage holds the device again.
    from pathlib import Path

    from pytest_kernelbench import Session

    monkeypatch.setattr("tempfile.gettempdir", lambda: str(tmp_path))  # this test's lock alone
    relu = Path(__file__).parent / "examples" / "problems" / "level1" / "2_ReLU.py"
    calls = tmp_path / "calls"  # when each forward ran
    candidate = tmp_path / "2_ReLU.py"
    candidate.write_text(
        "import time\nimport torch\n\n"
        "class ModelNew(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        f"        open({str(calls)!r}, 'a').write(repr(time.time()) + '\\n')\n"
        "        time.sleep(0.3)\n        return torch.relu(x)\n")
    seen: dict[str, float] = {}

    other = _timing_once_there_is(calls, seen, "asked", hold_s=1.0)
    with Session(device="cpu", trials=4, time_budget_s=0.05, p=0.0, confine="off",
                 drain="wait") as session:
        result = session.evaluate(relu, candidate)
    other.join()
    correct_and_timed(result)
    assert "asked" in seen, "the candidate's forward never ran"
    assert seen["taken"] - seen["asked"] < 0.7  # one request, not the stage's four
    (start, end), = result["aside"]["correct"]
    assert start <= seen["taken"] and end >= seen["released"]
    stamps = [float(line) for line in calls.read_text().split()]
    assert not [t for t in stamps if seen["taken"] < t < seen["released"]]
    assert stamps[-1] > seen["released"]  # the stage went on afterwards
    assert result["held"]["correct"][1] > seen["released"]


def _stopped_for_a_timing(tmp_path, slow_while: str, request: str, correct_and_timed) -> dict:
    """Judge a ReLU candidate whose forward works 1.5 s (a tick every 10 ms) in the calls where
    the expression slow_while holds (it reads CALLS, the calls so far, and os), with
    --kb-drain=stop and a timing that asks at the first tick; check that the request in
    progress (op `request`) stood stopped while the timing ran, went on afterwards, and was
    not charged the stop. Returns the record."""
    from pathlib import Path

    from pytest_kernelbench import Session

    relu = Path(__file__).parent / "examples" / "problems" / "level1" / "2_ReLU.py"
    ticks = tmp_path / "ticks"  # when the long forward worked
    candidate = tmp_path / "2_ReLU.py"
    candidate.write_text(
        "import os, time\nimport torch\n\nCALLS = []\n\n"
        "class ModelNew(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        CALLS.append(1)\n"
        f"        for _ in range(150 if {slow_while} else 0):\n"
        f"            open({str(ticks)!r}, 'a').write(repr(time.time()) + '\\n')\n"
        "            time.sleep(0.01)\n"
        "        return torch.relu(x)\n")
    seen: dict[str, float] = {}
    other = _timing_once_there_is(ticks, seen, "asked", hold_s=1.0)
    with Session(device="cpu", trials=1, time_budget_s=0.05, p=0.0, confine="off",
                 drain="stop") as session:
        result = session.evaluate(relu, candidate)
    other.join()
    correct_and_timed(result)
    assert seen["taken"] - seen["asked"] < 0.5  # not the rest of the 1.5 s request
    stamps = [float(line) for line in ticks.read_text().split()]
    assert not [t for t in stamps if seen["taken"] < t < seen["released"]]
    assert stamps[-1] > seen["released"]  # the request went on afterwards
    assert result["harness_s"]["stopped"] >= 0.9
    assert result["harness_s"][request] < 1.5 + 0.9  # the stop left out of the request's time
    return result


def test_with_drain_stop_a_timing_stops_a_request_in_progress(tmp_path, monkeypatch,
                                                               correct_and_timed):
    # The first correctness trial's forward works for 1.5 s: a timing that asks meanwhile gets
    # the device at once, the candidate stopped where it is until the timing ran; the trial
    # then goes on, and neither its time nor its deadline counts the stop.
    monkeypatch.setattr("tempfile.gettempdir", lambda: str(tmp_path))  # this test's lock alone
    _stopped_for_a_timing(tmp_path, "len(CALLS) == 1", "run", correct_and_timed)


def test_with_drain_stop_a_timing_stops_a_kernel_attribution_in_progress(tmp_path, monkeypatch,
                                                                         correct_and_timed):
    # A profiler session can take seconds: the attribute stage's profile request is stopped for
    # a timing that asks meanwhile, like a correctness trial. On a CPU the harness reads no
    # kernels, so the problem is made to look as if it had some, and the candidate's forward
    # turns slow once the attribution begins.
    from pytest_kernelbench.judge import attribute_stage, reference

    monkeypatch.setattr("tempfile.gettempdir", lambda: str(tmp_path))  # this test's lock alone
    slow = tmp_path / "slow"
    traits, note_kernels = reference.ReferenceSide.traits, attribute_stage.note_kernels

    def with_kernels(self, *args, **kwargs):
        return {**traits(self, *args, **kwargs), "kernels": []}

    def slowly(*args, **kwargs):
        slow.write_text("")
        return note_kernels(*args, **kwargs)

    monkeypatch.setattr(reference.ReferenceSide, "traits", with_kernels)
    monkeypatch.setattr(attribute_stage, "note_kernels", slowly)
    _stopped_for_a_timing(tmp_path, f"os.path.exists({str(slow)!r})", "profile",
                          correct_and_timed)


def test_the_attribute_stage_lets_a_waiting_timing_in_between_its_pieces(tmp_path, monkeypatch,
                                                                         correct_and_timed):
    # Reading a large problem's kernels and cost takes seconds in the pytest process, outside
    # any request of the worker: a timing that asks meanwhile runs before the stage's next piece
    # of work, not after the whole stage with every other worker stopped behind it.
    from pathlib import Path

    from pytest_kernelbench import Session
    from pytest_kernelbench.gpu import devices, roofline

    monkeypatch.setattr("tempfile.gettempdir", lambda: str(tmp_path))  # this test's lock alone
    relu = Path(__file__).parent / "examples" / "problems" / "level1" / "2_ReLU.py"
    good = Path(__file__).parent / "examples" / "candidates" / "good" / "level1" / "2_ReLU.py"
    asked = tmp_path / "asked"
    measure = roofline.problem_cost

    def slow_cost(model, inputs):
        asked.write_text("")
        deadline = time.monotonic() + 10
        while not devices.gate_closed(lock_path("cpu")) and time.monotonic() < deadline:
            time.sleep(0.01)
        return measure(model, inputs)

    monkeypatch.setattr(roofline, "problem_cost", slow_cost)
    seen: dict[str, float] = {}
    other = _timing_once_there_is(asked, seen, "asked", hold_s=1.0)
    with Session(device="cpu", trials=1, time_budget_s=0.05, p=0.0, confine="off",
                 drain="stop") as session:
        result = session.evaluate(relu, good)
    other.join()
    correct_and_timed(result)
    assert seen["released"] < result["held"]["attribute"][1]  # it ran inside the stage's hold
    assert result["harness_s"]["stopped"] >= 0.9  # charged as time stood aside for timings


def test_a_timing_whose_gpu_never_went_idle_says_so(tmp_path, monkeypatch):
    from pathlib import Path

    from pytest_kernelbench import Session
    from pytest_kernelbench.gpu import devices

    monkeypatch.setattr("tempfile.gettempdir", lambda: str(tmp_path))  # this test's lock alone
    monkeypatch.setattr(devices, "wait_for_idle", lambda device: False)
    relu = Path(__file__).parent / "examples" / "problems" / "level1" / "2_ReLU.py"
    good = Path(__file__).parent / "examples" / "candidates" / "good" / "level1" / "2_ReLU.py"
    with Session(device="cpu", trials=1, time_budget_s=0.05, p=0.0, confine="off",
                 drain="stop") as session:
        result = session.evaluate(relu, good)
    assert any("still busy" in flag for flag in result["flags"]), result["flags"]


def test_a_thread_the_candidate_left_running_is_stopped_between_stages(tmp_path, correct_and_timed):
    from pathlib import Path

    from pytest_kernelbench import Session

    relu = Path(__file__).parent / "examples" / "problems" / "level1" / "2_ReLU.py"
    ticks = tmp_path / "ticks"
    candidate = tmp_path / "2_ReLU.py"
    candidate.write_text(
        "import threading, time\nimport torch\n\n"
        "def tick():\n"
        "    while True:\n"
        f"        open({str(ticks)!r}, 'a').write('.')\n"
        "        time.sleep(0.01)\n\n"
        "class ModelNew(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        threading.Thread(target=tick, daemon=True).start()\n\n"
        "    def forward(self, x):\n        return torch.relu(x)\n")
    with Session(device="cpu", trials=1, time_budget_s=0.05, p=0.0, confine="off") as session:
        result = session.evaluate(relu, candidate)
        correct_and_timed(result)
        time.sleep(0.1)  # a tick written as the worker was stopped lands within this
        before = ticks.stat().st_size
        time.sleep(0.5)
        assert ticks.stat().st_size == before, "the candidate's thread ran between stages"
        state = Path(f"/proc/{session.evaluator.sandbox.child_pid}/stat").read_text()
        assert state.rpartition(")")[2].split()[0] == "T"


def test_a_timing_marks_the_host_as_timing_and_shared_work_does_not(private_locks):
    from pytest_kernelbench.gpu.devices import timing_in_progress

    assert not timing_in_progress()
    with device_lock("cpu", exclusive=False):
        assert not timing_in_progress()
    seen = []
    with device_lock("cpu", exclusive=True):
        # seen from another thread as another process would see it (flock is per open file)
        probe = threading.Thread(target=lambda: seen.append(timing_in_progress()))
        probe.start()
        probe.join()
    assert seen == [True] and not timing_in_progress()


def test_a_timing_pauses_for_compilers_only_while_some_may_run(tmp_path, monkeypatch):
    monkeypatch.setattr("tempfile.gettempdir", lambda: str(tmp_path))  # this test's files alone
    monkeypatch.setattr(devices, "QUIET_SETTLE_S", 0.5)

    def seconds_to_take_the_device() -> float:
        began = time.monotonic()
        with device_lock("cpu", exclusive=True):
            return time.monotonic() - began

    assert seconds_to_take_the_device() < 0.25
    announced = devices.announce_compilers()  # as a build pool or a compiling worker does
    try:
        assert seconds_to_take_the_device() >= 0.5
    finally:
        announced.close()
    assert seconds_to_take_the_device() < 0.25


def test_a_compile_item_waiting_for_another_workers_build_lets_the_device_go(tmp_path, private_locks,
                                                                             correct_and_timed):
    # Another worker's pool builds this source (it holds the build folder): the compile item,
    # already under its shared hold, waits for that build with the hold stepped aside, or a
    # timing of every other worker waits the minute the build takes.
    from pathlib import Path

    from pytest_kernelbench import Session
    from pytest_kernelbench.building import builds

    relu = Path(__file__).parent / "examples" / "problems" / "level1" / "2_ReLU.py"
    candidate = _relu_that_says_it_builds(tmp_path)
    free_while_waiting = []

    with Session(device="cpu", trials=1, time_budget_s=0.05, p=0.0,
                 build_cache=tmp_path / "cache") as session:
        folder = builds.build_folder(tmp_path / "cache", candidate.read_bytes(),
                                     builds.toolchain(session.evaluator.arch))
        folder.mkdir(parents=True)
        other_worker = open(folder / builds.LOCK_FILE, "a+")
        fcntl.flock(other_worker, fcntl.LOCK_EX)

        def look_then_finish() -> None:
            free_while_waiting.append(_cpu_device_free())
            other_worker.close()

        threading.Timer(1.0, look_then_finish).start()
        result = session.evaluate(relu, candidate)
    assert free_while_waiting == [True]
    correct_and_timed(result)
    [aside] = result["aside"]["compile"]
    assert aside[1] - aside[0] >= 0.5  # the hold was let go for the wait, and taken back


def test_builds_stop_while_a_timing_runs_and_finish_afterwards(tmp_path, private_locks):
    from pytest_kernelbench.building import builds
    from pytest_kernelbench.building.pool import BuildPool

    ticks = tmp_path / "ticks"
    candidate = tmp_path / "a.py"
    # A "build" (its import) that keeps the CPU busy for about two seconds, saying when.
    candidate.write_text("# load_inline\nimport time\n"
                         f"with open({str(ticks)!r}, 'a') as out:\n"
                         "    for _ in range(200):\n"
                         "        out.write(repr(time.time()) + '\\n'); out.flush()\n"
                         "        time.sleep(0.01)\n")
    planned = builds.plan([candidate], tmp_path / "cache", arch="")
    pool = BuildPool(planned, arch="", jobs=1, timeout_s=60).start()
    deadline = time.monotonic() + 60
    while not ticks.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.2)
    assert devices.compilers_may_run()  # so the timing below waits for the build to pause
    with device_lock("cpu", exclusive=True):
        taken = time.time()
        time.sleep(1.0)
        released = time.time()
    pool.close()
    assert not devices.compilers_may_run()
    stamps = [float(line) for line in ticks.read_text().split()]
    assert planned[0].status == "deferred" and len(stamps) == 200  # it ran to its end
    assert not [t for t in stamps if taken + 0.05 < t < released]
    assert stamps[-1] > released
    assert 0.8 < planned[0].phases["paused_s"] < 10  # its entry says how long it stood still
    start, end = planned[0].span  # from its process's start to its end, pauses included
    assert start < stamps[0] and end >= stamps[-1]
    assert end - start >= planned[0].seconds + planned[0].phases["paused_s"] - 0.01


def test_a_timing_keeps_the_device_even_while_its_worker_compiles(private_locks):
    with device_lock("cpu", exclusive=True) as hold:
        assert not hold.step_aside() and hold.held and hold.aside == []
