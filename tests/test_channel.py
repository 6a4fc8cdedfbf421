"""judge/channel.py: one deadline per stage, and the requests a stage sends its worker, through
a stand-in for the sandbox (no worker process)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from pytest_kernelbench import record
from pytest_kernelbench.isolation import wire
from pytest_kernelbench.isolation.sandbox import Reply
from pytest_kernelbench.judge.channel import SHORTEST_WAIT_S, Deadline, WorkerChannel
from pytest_kernelbench.settings import Settings
from pytest_kernelbench.suite.discovery import Candidate, Case, Problem


def fresh() -> record.Record:
    return record.new_record(1, 2, "ReLU", "good", "s0", "good/level1/2_ReLU.py")


class Sandbox:
    """Answers every request at once, as if its worker had been stopped stopped_s for others'
    timings meanwhile; keeps what it was asked and the time it was given."""

    worker_device = "cpu"
    hold = None

    def __init__(self, stopped_s: float = 0.0):
        self.stopped_s = stopped_s
        self.started: list[str] = []
        self.asked: list[tuple[dict, float]] = []
        self.waited_s = 0.0

    def request(self, request, timeout_s):
        self.asked.append((request, timeout_s))
        return Reply({"op": request.op})

    def let_timings_in(self) -> float:
        return self.waited_s


def channel_for(tmp_path: Path, sandbox: Sandbox, keeps_state: bool = False, **fields):
    settings = Settings(problems_dir=tmp_path, candidate_dirs=(),
                        build_cache=tmp_path / "builds", **fields)
    return WorkerChannel(sandbox, settings, "cpu", "", lambda: keeps_state, started_s=0.0)


def case_for(tmp_path: Path, source: str = "import torch\n", name: str = "cand.py") -> Case:
    path = tmp_path / name
    path.write_text(source)
    problem = Problem(1, 2, "ReLU", tmp_path / "2_ReLU.py")
    return Case(problem, "good", "s0", Candidate("good", 1, 2, "s0", path))


def test_a_deadline_gives_an_inner_stage_its_own_time_and_the_outer_one_its_time_back():
    deadline = Deadline()
    with deadline.running(10.0):
        outer_at = deadline.at
        with deadline.running(0.0):
            assert deadline.left_s() == SHORTEST_WAIT_S  # never nothing: a request still asks
            time.sleep(0.01)
        assert deadline.at > outer_at  # the inner stage's time is given back
    assert deadline.at == float("inf")


def test_a_deadline_is_one_clock_that_only_counts_down():
    deadline = Deadline()
    with deadline.running(60.0):
        first = deadline.left_s()
        time.sleep(0.01)
        second = deadline.left_s()
        assert 0 < second < first <= 60.0
        deadline.extend(30.0)
        assert second + 29.0 < deadline.left_s() <= second + 30.0


def test_every_request_about_a_case_loads_it_under_the_runs_settings(tmp_path):
    channel = channel_for(tmp_path, Sandbox(), keeps_state=True, precision="fp16")
    case = case_for(tmp_path)
    loading = channel.loading(case)
    assert (loading.precision, loading.seed, loading.device) == ("fp16", 42, "cpu")
    assert loading.problem == str(case.problem.path)
    assert loading.candidate == str(case.candidate.path)
    assert loading.lockstep is True and loading.order_trials is False  # not on a CPU
    assert loading.env["TORCH_EXTENSIONS_DIR"].startswith(str(tmp_path / "builds"))
    assert channel.build_folder(case) == Path(loading.env["TORCH_EXTENSIONS_DIR"])


def test_candidates_of_other_sources_build_in_folders_of_their_own(tmp_path):
    channel = channel_for(tmp_path, Sandbox())
    one = channel.build_folder(case_for(tmp_path, "import torch\n", "one.py"))
    same = channel.build_folder(case_for(tmp_path, "import torch\n", "same.py"))
    other = channel.build_folder(case_for(tmp_path, "import torch  # another\n", "other.py"))
    assert one == same and one != other


def test_a_request_is_bounded_by_the_deadline_and_charged_to_the_record(tmp_path):
    sandbox = Sandbox()
    channel = channel_for(tmp_path, sandbox)
    made = fresh()
    with channel.deadline.running(5.0):
        load = wire.Load(channel.loading(case_for(tmp_path)))
        reply = channel.ask(made, load)
    assert isinstance(reply, Reply) and reply.header == {"op": "load"}
    [(request, timeout_s)] = sandbox.asked
    assert request is load and 0 < timeout_s <= 5.0
    assert made["harness_s"]["load"] >= 0 and "stopped" not in made["harness_s"]


def test_time_a_worker_was_stopped_for_others_is_given_back_to_the_stage(tmp_path):
    channel = channel_for(tmp_path, Sandbox(stopped_s=2.0))
    made = fresh()
    with channel.deadline.running(5.0):
        channel.ask(made, wire.Run(channel.loading(case_for(tmp_path)), input_seed=1))
        assert channel.deadline.left_s() > 6.0
    assert made["harness_s"]["stopped"] == pytest.approx(2.0)


def test_timings_let_in_between_pieces_of_work_are_charged_as_stopped(tmp_path):
    sandbox = Sandbox()
    channel = channel_for(tmp_path, sandbox)
    made = fresh()
    channel.let_timings_in(made)
    assert "stopped" not in (made.get("harness_s") or {})
    sandbox.waited_s = 0.5
    channel.let_timings_in(made)
    channel.let_timings_in(None)  # nothing to charge it to
    assert made["harness_s"]["stopped"] == pytest.approx(0.5)
