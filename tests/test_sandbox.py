"""The sandbox on its own: one worker per candidate, faults as statuses, confinement in force."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from pytest_kernelbench import confine, faults
from pytest_kernelbench.isolation import wire
from pytest_kernelbench.isolation.sandbox import Fault, Sandbox, seconds, violation

EXAMPLES = Path(__file__).parent / "examples"
RELU = EXAMPLES / "problems" / "level1" / "2_ReLU.py"


@pytest.mark.parametrize(("value", "text"), [(300.0, "300"), (12.4, "12"), (2.99876, "3"),
                                             (0.5, "0.5")])
def test_limits_are_written_as_people_write_them(value, text):
    assert seconds(value) == text


def test_a_violation_names_the_first_attempt_and_counts_the_rest():
    fault = violation(["write /p/1.py", "connect ('1.2.3.4', 80)"], "Landlock ABI 7")
    assert fault.status == faults.SANDBOX_VIOLATION
    assert fault.message == "candidate tried to write /p/1.py (and 1 more); refused (Landlock ABI 7)"
    assert "connect ('1.2.3.4', 80)" in fault.details
    assert "not prevented" in violation(["write /p/1.py"], "none (--kb-confine=off)").message


def _loading(candidate: Path) -> wire.Loading:
    return wire.Loading(problem=str(RELU), candidate=str(candidate), seed=42, device="cpu",
                        mode="train", precision="fp32", tf32="off")


def _load(candidate: Path) -> wire.Load:
    return wire.Load(_loading(candidate))


def _run(candidate: Path) -> wire.Run:
    return wire.Run(_loading(candidate), input_seed=1042)


@pytest.mark.parametrize("mode", ["off", "auto"])
def test_a_hung_candidate_times_out_and_the_next_one_gets_a_fresh_worker(tmp_path, mode):
    if mode == "auto" and not confine.landlock_abi():
        pytest.skip("this kernel offers no Landlock")
    hangs = tmp_path / "hangs.py"
    hangs.write_text("import time\ntime.sleep(60)\n")
    honest = EXAMPLES / "candidates" / "good" / "level1" / "2_ReLU.py"
    sandbox = Sandbox(device="cpu", confine_mode=mode, protected=(tmp_path,))
    try:
        fault = sandbox.request(_load(hangs), timeout_s=2.0)
        assert isinstance(fault, Fault) and fault.status == faults.TIMEOUT
        assert fault.message.startswith("no answer within 2 s")
        reply = sandbox.request(_run(honest), timeout_s=60.0)
        assert not isinstance(reply, Fault), reply
        assert reply.value.shape == (32, 48) and bool((reply.value >= 0).all())
        assert sandbox.confinement.startswith("Landlock ABI" if mode == "auto" else "none")
        scratch = sandbox.scratch
        assert (scratch is not None) == (mode == "auto")
    finally:
        sandbox.close()
    assert scratch is None or not scratch.exists()  # removed with its worker


def test_a_request_the_worker_refuses_is_an_error_of_the_harness_not_a_verdict(monkeypatch):
    encode = wire.encode_request
    monkeypatch.setattr(wire, "encode_request", lambda request: {
        name: value for name, value in encode(request).items() if name != "input_seed"})
    sandbox = Sandbox(device="cpu")
    try:
        with pytest.raises(wire.BadRequest, match="the worker refused a run request: a run "
                           "request lacks required fields: input_seed"):
            sandbox.request(_run(EXAMPLES / "candidates" / "good" / "level1" / "2_ReLU.py"),
                            timeout_s=60.0)
    finally:
        sandbox.close()


def test_what_a_candidates_thread_tried_between_requests_is_said_after_a_release(tmp_path):
    # The release at a stage's end answers with the attempts its worker recorded since the
    # last request: they must not be lost with it, but fail the candidate's next request.
    if not confine.landlock_abi():
        pytest.skip("this kernel offers no Landlock")
    secret = tmp_path / "other_set" / "answer.py"
    secret.parent.mkdir()
    secret.write_text("# another candidate's file\n")
    sneaky = tmp_path / "mine" / "2_ReLU.py"
    sneaky.parent.mkdir()
    sneaky.write_text(f'''
import threading, time
import torch

def peek():
    time.sleep(0.3)
    try:
        open({str(secret)!r}).read()
    except OSError:
        pass

class ModelNew(torch.nn.Module):
    def forward(self, x):
        threading.Thread(target=peek, daemon=True).start()
        return torch.relu(x)
''')
    sandbox = Sandbox(device="cpu", confine_mode="auto", protected=(secret.parent,))
    try:
        first = sandbox.request(_run(sneaky), timeout_s=60.0)
        assert not isinstance(first, Fault), first  # the thread has not tried yet
        time.sleep(1.0)
        sandbox.release()
        fault = sandbox.request(_run(sneaky), timeout_s=60.0)
        assert isinstance(fault, Fault) and fault.status == faults.SANDBOX_VIOLATION, fault
        assert str(secret) in fault.message
    finally:
        sandbox.close()


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, queue = [], [pid]
    while queue:
        for child in children.get(queue.pop(), []):
            found.append(child)
            queue.append(child)
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
def test_a_killed_pytest_process_leaves_no_zygote_or_worker_behind(tmp_path):
    started = tmp_path / "started"
    hangs = tmp_path / "hangs.py"
    hangs.write_text(f"import time\nopen({str(started)!r}, 'w').close()\ntime.sleep(600)\n")
    script = (f"from pytest_kernelbench.isolation import wire\n"
              f"from pytest_kernelbench.isolation.sandbox import Sandbox\n"
              f"request = wire.decode_request({wire.encode_request(_load(hangs))!r})\n"
              f"Sandbox(device='cpu').request(request, timeout_s=600.0)\n")
    parent = subprocess.Popen([sys.executable, "-c", script])
    try:
        deadline = time.monotonic() + 120
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert started.exists(), "the candidate never started"
        left = _descendants(parent.pid)
        assert len(left) >= 2  # the zygote and the worker it forked
    finally:
        parent.kill()
        parent.wait()
    deadline = time.monotonic() + 30
    while any(_alive(pid) for pid in left) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [pid for pid in left if _alive(pid)]
