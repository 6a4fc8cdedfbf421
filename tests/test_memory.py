"""The processes of a run give a device's memory back to a case that ran out of it
(gpu/memory.py): members acknowledge a claim and stay off the device until it is withdrawn."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import uuid
from pathlib import Path

import pytest

from pytest_kernelbench.gpu import memory

# A member process: serves claims before each of its "stages" and notes when it gave back
# memory and when it went on to take the device.
MEMBER = textwrap.dedent('''
    import sys, time
    from pathlib import Path
    from pytest_kernelbench.gpu import memory
    device, log = sys.argv[1], Path(sys.argv[2])
    member = memory.Membership(device)
    def give_back(workers):
        with log.open("a") as out:
            out.write(f"gave {time.time()} {workers}\\n")
    log.write_text("ready\\n")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        memory.serve_claims(device, give_back)
        with log.open("a") as out:
            out.write(f"stage {time.time()}\\n")
        time.sleep(0.05)
''')


@pytest.fixture
def device(tmp_path, monkeypatch):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    return f"testdev{uuid.uuid4().hex[:8]}"


def start_member(device: str, log: Path, script: str = MEMBER) -> subprocess.Popen:
    member = subprocess.Popen([sys.executable, "-c", script, device, str(log)],
                              env={**os.environ, "TMPDIR": tempfile.gettempdir()})
    deadline = time.monotonic() + 30
    while not (log.exists() and log.read_text().startswith("ready")):
        assert time.monotonic() < deadline and member.poll() is None, "member did not start"
        time.sleep(0.02)
    return member


def test_a_claim_waits_until_every_other_member_gave_its_memory_back(device, tmp_path):
    log = tmp_path / "member.log"
    member = start_member(device, log)
    try:
        mine = []
        with memory.claim_memory(device, lambda workers: mine.append(workers), wait_s=20) as room:
            got = room()
            gave = [line for line in log.read_text().splitlines() if line.startswith("gave")]
            claimed_at = time.time()
            time.sleep(0.5)  # the member stays off the device while the claim stands
        lines = log.read_text().splitlines()
        during = [line for line in lines
                  if line.startswith("stage") and claimed_at < float(line.split()[1]) < time.time() - 0.05]
        assert mine == [False]
        assert len(gave) == 1
        assert (got.gave_back, got.silent) == (1, 0)
        assert got.total_bytes and got.free_bytes is not None
        assert not during
    finally:
        member.kill()
        member.wait()


def test_only_a_claim_for_workers_has_the_members_stop_theirs(device, tmp_path):
    log = tmp_path / "member.log"
    member = start_member(device, log)
    try:
        mine = []
        for workers in (False, True):
            with memory.claim_memory(device, lambda w: mine.append(w), wait_s=20,
                                     workers=workers) as room:
                got = room()
            assert got.workers_stopped is workers
            assert got.as_dict()["others_workers_stopped"] is workers
        gave = [line.split()[2] for line in log.read_text().splitlines()
                if line.startswith("gave")]
        assert gave == ["False", "True"] and mine == [False, True]
    finally:
        member.kill()
        member.wait()


def test_a_member_that_never_answers_is_counted_silent_after_the_wait(device, tmp_path):
    log = tmp_path / "member.log"
    silent = MEMBER.replace("memory.serve_claims(device, give_back)", "pass")
    member = start_member(device, log, silent)
    try:
        began = time.monotonic()
        with memory.claim_memory(device, lambda workers: None, wait_s=0.5) as room:
            got = room()
        assert time.monotonic() - began < 10
        assert (got.gave_back, got.silent) == (0, 1)
    finally:
        member.kill()
        member.wait()


IDLE_MEMBER = textwrap.dedent('''
    import sys, threading, time
    from pathlib import Path
    from pytest_kernelbench.gpu import memory
    device, log = sys.argv[1], Path(sys.argv[2])
    def give_back(workers):
        with log.open("a") as out:
            out.write(f"gave {workers}\\n")
    member = memory.Membership(device, give_back, threading.RLock())
    log.write_text("ready\\n")
    time.sleep(30)  # runs no stage: its thread answers
''')


def test_a_member_that_runs_no_stage_answers_from_its_thread(device, tmp_path):
    log = tmp_path / "member.log"
    member = start_member(device, log, IDLE_MEMBER)
    try:
        with memory.claim_memory(device, lambda workers: None, wait_s=20) as room:
            got = room()
        assert (got.gave_back, got.silent) == (1, 0)
        assert log.read_text().splitlines()[1:] == ["gave False"]
    finally:
        member.kill()
        member.wait()


def test_a_members_thread_leaves_a_claim_alone_while_a_stage_runs(device, tmp_path):
    between_stages = threading.RLock()
    gave = []
    me = memory.Membership(device, lambda workers: gave.append(1), between_stages)
    try:
        with between_stages:  # a stage runs
            claim = memory._OwnedFile(memory._folder(device, "claims"), "1-0")
            time.sleep(3 * memory.IDLE_POLL_S)
            assert gave == []
        deadline = time.monotonic() + 10
        while not gave and time.monotonic() < deadline:
            time.sleep(0.05)
        assert gave == [1]
        assert memory.acknowledged(device, "1-0") == {str(os.getpid())}
        claim.close()
    finally:
        me.close()


# A member that waits for another's claim, then does what follows.
UNTIL_A_CLAIM = textwrap.dedent('''
    import sys, time
    from pathlib import Path
    from pytest_kernelbench.gpu import memory
    device, log = sys.argv[1], Path(sys.argv[2])
    member = memory.Membership(device)
    log.write_text("ready\\n")
    while not memory.claims(device):
        time.sleep(0.001)
''')
LEAVER = UNTIL_A_CLAIM + "memory.serve_claims(device, lambda workers: None, wait=False)  # then ends\n"


def test_a_member_that_acknowledged_and_ended_counts_as_having_given_back(device, tmp_path):
    # Its acknowledgement outlives it (an xdist worker whose last item ended, or a claimer whose
    # own claim went through): the claim counts it, not as a member never there.
    log = tmp_path / "leaver.log"
    member = start_member(device, log, LEAVER)
    try:
        # this process gives its own memory back only once the member ended
        with memory.claim_memory(device, lambda workers: member.wait(timeout=20), wait_s=20) as room:
            got = room()
        assert member.returncode == 0
        assert (got.gave_back, got.silent) == (1, 0)
    finally:
        member.kill()
        member.wait()


def test_a_dead_members_file_does_not_hold_a_claim_up(device, tmp_path):
    log = tmp_path / "member.log"
    member = start_member(device, log)
    member.kill()
    member.wait()
    with memory.claim_memory(device, lambda workers: None, wait_s=20) as room:
        got = room()
    assert (got.gave_back, got.silent) == (0, 0)
    assert memory.members(device) == set()


CLAIMER = UNTIL_A_CLAIM + textwrap.dedent('''
    with memory.claim_memory(device, lambda workers: None, wait_s=20) as room:
        got = room()
    with log.open("a") as out:
        out.write(f"claimed {got.gave_back} {got.silent}\\n")
''')


def test_two_claims_at_once_both_go_through(device, tmp_path):
    # A claimer serves another's claim without waiting for it to end: neither waits for the
    # other forever, and each sees the other give its memory back.
    log = tmp_path / "claimer.log"
    me = memory.Membership(device)
    other = start_member(device, log, CLAIMER)
    try:
        with memory.claim_memory(device, lambda workers: None, wait_s=20) as room:
            got = room()
        # As this process's next stage would: it answers the other's claim, if it still
        # stands, and stays off the device until that is withdrawn.
        memory.serve_claims(device, lambda workers: None)
        assert other.wait(timeout=20) == 0
        assert (got.gave_back, got.silent) == (1, 0)
        assert "claimed 1 0" in log.read_text()
    finally:
        me.close()
        other.kill()
        other.wait()


def test_a_claim_is_withdrawn_when_its_block_ends(device):
    with memory.claim_memory(device, lambda workers: None, wait_s=1):
        assert len(memory.claims(device)) == 1
    assert memory.claims(device) == []
    assert not list(Path(tempfile.gettempdir()).glob("*.claims/*.ack.*"))


def test_two_memberships_in_one_process_do_not_wait_on_each_other(device):
    # two API sessions at once in one process, each with its evaluator
    first = memory.Membership(device)
    done = []
    thread = threading.Thread(target=lambda: done.append(memory.Membership(device)))
    thread.start()
    thread.join(timeout=5)
    assert done, "the second membership waited on the first's lock"
    assert memory.members(device) == {str(os.getpid())}
    done[0].close()
    first.close()


def test_host_memory_reads_available_and_total_bytes(tmp_path):
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       24576000 kB\nMemFree:  100 kB\n"
                       "MemAvailable:   20480000 kB\n")
    assert memory.host_memory(meminfo) == (20480000 * 1024, 24576000 * 1024)
    assert memory.host_memory(tmp_path / "missing") == (None, None)


@pytest.mark.parametrize(("reference", "free", "fits"), [
    (None, 10, True),  # not measured yet: tried
    (3, None, True),  # free memory unknown: tried
    (3, 6, True),  # twice the reference's side fits
    (3, 5, False),
])
def test_a_stage_fits_beside_the_others_where_twice_its_reference_side_is_free(reference, free,
                                                                                fits):
    assert memory.fits_beside(reference, free) is fits


def test_a_footprint_is_shared_and_keeps_its_largest_figure(device):
    assert memory.footprint(device, "abc-correct") is None
    memory.note_footprint(device, "abc-correct", 5)
    memory.note_footprint(device, "abc-correct", 3)
    assert memory.footprint(device, "abc-correct") == 5


def test_a_stage_that_would_not_fit_claims_the_memory_without_running_out_first(device,
                                                                                 monkeypatch):
    # (device: this test's own temporary folder, where the cpu's locks and footprints go)
    from pytest_kernelbench import Session
    from pytest_kernelbench.suite import loading

    # A reference side that held 3 GiB, 4 GiB free beside the others: the second attempt of
    # the problem claims the memory before each stage; the first, before each stage after
    # its correctness trials measured the problem.
    monkeypatch.setattr(loading, "peak_device_bytes", lambda: 3 * 2**30)
    monkeypatch.setattr(memory, "free_and_total", lambda device: (4 * 2**30, 80 * 2**30))
    examples = Path(__file__).parent / "examples"
    problem = examples / "problems" / "level1" / "2_ReLU.py"
    good = examples / "candidates" / "good" / "level1" / "2_ReLU.py"
    from pytest_kernelbench.judge.evaluation import Evaluator

    alone: list[str] = []
    for_room = Evaluator._alone_for_room

    def noted(self, case, stage, *rest):
        alone.append(stage)
        inside.append(stage)
        try:
            return for_room(self, case, stage, *rest)
        finally:
            inside.pop()

    monkeypatch.setattr(Evaluator, "_alone_for_room", noted)
    from pytest_kernelbench.isolation.sandbox import Sandbox

    inside: list[str] = []  # the stage judged alone now, if any
    stopped: list[str] = []  # the stages that stopped a worker while judged alone
    stop_child = Sandbox.stop_child

    def noted_stop(self, *args, **kwargs):
        stopped.extend(inside)
        return stop_child(self, *args, **kwargs)

    monkeypatch.setattr(Sandbox, "stop_child", noted_stop)
    with Session(device="cpu", trials=2, time_budget_s=0.05, p=0.0) as session:
        first = session.evaluate(problem, good)
        first_alone, alone[:] = list(alone), []
        second = session.evaluate(problem, good)
    # the first attempt's later stages expect what its correctness trials held
    assert first_alone == ["speed", "attribute"]
    # and run in the worker that ran the trials: nothing ran out in it
    assert not set(stopped) & {"speed", "attribute"}, stopped  # (compile: a new attempt's)
    assert alone == ["compile", "correct", "speed", "attribute"]
    waited = "waited for the device's memory"
    assert any(waited in flag and "3.00 GiB" in flag and "4.00 GiB" in flag
               for flag in second["flags"])
    assert second["memory"]["others_gave_back_first"] is True
    assert first["verdicts"] == second["verdicts"] and second["verdicts"]["correct"] == "passed"


# A neighbour whose paused worker holds memory that only stopping it gives back: it holds the
# marker file until a claim has it stop its worker.
NEIGHBOUR = textwrap.dedent('''
    import sys, threading, time
    from pathlib import Path
    from pytest_kernelbench.gpu import memory
    device, log = sys.argv[1], Path(sys.argv[2])
    marker = log.with_name("neighbour-worker-holds-memory")
    def give_back(workers):
        with log.open("a") as out:
            out.write(f"gave {workers}\\n")
        if workers:
            marker.unlink(missing_ok=True)
    member = memory.Membership(device, give_back, threading.RLock())
    log.write_text("ready\\n")
    time.sleep(60)
''')

SHORT_OF_MEMORY_WHILE_THE_NEIGHBOUR_HOLDS_IT = '''
import os

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        if os.path.exists({marker!r}):
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return torch.relu(x)
'''


def test_a_stage_that_claimed_the_memory_and_ran_out_is_judged_again_with_every_worker_stopped(
        tmp_path, monkeypatch):
    # A stage admitted alone (its problem's footprint did not fit) still runs beside the other
    # processes' paused workers; one that runs out of memory there is no out_of_memory verdict
    # until it ran out with them stopped too.
    from pytest_kernelbench import Session
    from pytest_kernelbench.suite import loading

    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))  # the cpu's locks and footprints
    monkeypatch.setattr(loading, "peak_device_bytes", lambda: 3 * 2**30)
    monkeypatch.setattr(memory, "free_and_total", lambda device: (4 * 2**30, 80 * 2**30))
    examples = Path(__file__).parent / "examples"
    problem = examples / "problems" / "level1" / "2_ReLU.py"
    marker = tmp_path / "neighbour-worker-holds-memory"
    candidate = tmp_path / "candidates" / "level1" / "2_ReLU.py"
    candidate.parent.mkdir(parents=True)
    candidate.write_text(SHORT_OF_MEMORY_WHILE_THE_NEIGHBOUR_HOLDS_IT.format(marker=str(marker)))
    with Session(device="cpu", trials=2, time_budget_s=0.05, p=0.0) as session:
        first = session.evaluate(problem, candidate)  # measures the problem's footprint
        log = tmp_path / "neighbour.log"
        neighbour = start_member("cpu", log, NEIGHBOUR)
        try:
            marker.touch()
            second = session.evaluate(problem, candidate)
        finally:
            neighbour.kill()
            neighbour.wait()
    assert first["verdicts"]["correct"] == "passed"
    assert second["verdicts"]["correct"] == "passed", second["error"]
    assert second["verdicts"] == first["verdicts"]
    assert any("beside the other processes' paused workers" in flag
               and "every other worker of the run stopped" in flag and "2.00 GiB" in flag
               for flag in second["flags"]), second["flags"]
    assert "gave True" in log.read_text().splitlines()
    # a later stage waited for room too, without stopping anyone: the record's memory still
    # speaks for the run that had every other worker stopped
    assert sum("waited for the device's memory" in flag for flag in second["flags"]) >= 2
    assert second["memory"]["others_workers_stopped"] is True
