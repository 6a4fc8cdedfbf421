"""Stream-order trials: how their replies become verdicts (the trials themselves need a GPU; the
GPU script's `order` section runs them on candidates/stream-order)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from pytest_kernelbench import faults
from pytest_kernelbench.gpu import ordering
from pytest_kernelbench.isolation.sandbox import Fault, Reply
from pytest_kernelbench.judge.correct_stage import Trials
from pytest_kernelbench.suite.correctness import Verdict

RIGHT, WRONG = "right", "wrong"


def trials_answering(replies: dict[str, Reply | Fault]):
    """Trials over a stand-in context whose worker answers each order with replies[order]."""
    asked: list[str] = []

    def ask(record, request):
        asked.append(request.order)
        seeds.append(request.input_seed)
        return replies[request.order]

    def judge(case, seed, value, calls=None):
        return None if value == RIGHT else Verdict(faults.MISMATCH, "output: 9 of 9 differ")

    seeds: list[int] = []
    channel = SimpleNamespace(ask=ask, loading=lambda case: case)
    ctx = SimpleNamespace(channel=channel, answers=SimpleNamespace(judge=judge),
                          input_seed=lambda t: 1000 + t, settings=SimpleNamespace(trials=5))
    trials = Trials(ctx, case=None, record={"upstream": {}})
    trials.seeds = seeds  # type: ignore[attr-defined]  # the draw each order trial asked for
    return trials, asked


def answer(value: str, streams: int = 0) -> Reply:
    return Reply(header={"ok": True, "streams": streams}, value=value)


def test_an_output_read_before_its_inputs_were_written_is_a_race():
    trials, asked = trials_answering({"inputs_late": answer(WRONG, streams=1)})
    outcome = trials.order_trials()
    assert outcome.status == faults.RACE and asked == ["inputs_late"]
    assert "read them before they were written" in outcome.message
    assert "input seed 1005" in outcome.message and trials.record["status"] == faults.RACE


def test_a_caller_that_does_not_wait_for_the_candidates_streams_is_a_race():
    trials, asked = trials_answering({"inputs_late": answer(RIGHT, streams=2),
                                      "own_streams_late": answer(WRONG, streams=2)})
    outcome = trials.order_trials()
    assert outcome.status == faults.RACE and asked == list(ordering.ORDERS)
    assert "not made to wait for them" in outcome.message


@pytest.mark.parametrize("streams, orders", [(0, ["inputs_late"]), (1, list(ordering.ORDERS))])
def test_an_ordered_candidate_passes_and_only_one_with_streams_gets_the_second_trial(streams,
                                                                                     orders):
    replies = {order: answer(RIGHT, streams) for order in ordering.ORDERS}
    trials, asked = trials_answering(replies)
    assert trials.order_trials() is None and asked == orders


def test_each_order_trial_draws_inputs_of_its_own():
    # An output the caller's stream never waited for must not read the right answer the last
    # trial left in the same memory for the same draw.
    replies = {order: answer(RIGHT, streams=1) for order in ordering.ORDERS}
    trials, _ = trials_answering(replies)
    trials.order_trials()
    assert trials.seeds == [1005, 1006]


def test_a_fault_in_an_order_trial_keeps_its_own_status():
    trials, _ = trials_answering({"inputs_late": Fault(faults.CUDA_ERROR, "illegal address")})
    outcome = trials.order_trials()
    assert outcome.status == faults.CUDA_ERROR and outcome.message.startswith("inputs_late trial")


def test_streams_the_candidate_makes_are_tracked_and_torchs_own_wrappers_are_not(monkeypatch):
    import torch

    made_ids = iter(range(100, 10_000))

    class FakeStream:  # stands in for torch.cuda.Stream, which a CPU build cannot make
        def __new__(cls, device=None, priority=0, **kwargs):
            stream = object.__new__(cls)
            stream.stream_id = kwargs.get("stream_id", next(made_ids) % 32 + 100)  # a pool
            stream.device_index, stream.device_type = kwargs.get("device_index", 0), 1
            return stream

    monkeypatch.setattr(torch.cuda, "Stream", FakeStream)
    monkeypatch.setattr(torch.cuda, "current_stream", lambda device=None: FakeStream(
        stream_id=7, device_index=0, device_type=1))
    ordering.track_streams()
    made = [torch.cuda.Stream() for _ in range(3)]
    torch.cuda.Stream(stream_id=7, device_index=0, device_type=1)  # as current_stream() wraps
    assert {s.stream_id for s in ordering.own_streams("cuda:0")} == {s.stream_id for s in made}
    for _ in range(300):  # short-lived streams from the pool do not pile up
        torch.cuda.Stream()
    seen = ordering.own_streams("cuda:0")
    assert len(seen) == 32 and 7 not in {s.stream_id for s in seen}
