"""The timing engine's statistics and stopping rule, the baseline cache and speed-of-light
figures (the build cache's tests are in test_builds.py)."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
import torch

from pytest_kernelbench.gpu import roofline, timing
from pytest_kernelbench.judge import baselines


def test_the_rse_of_the_median_shrinks_with_more_samples_and_ignores_outliers():
    few = [1.0, 1.1, 0.9, 1.05, 0.95] * 4
    many = few * 25
    assert timing.rse_of_median(many) == pytest.approx(timing.rse_of_median(few) / 5, rel=0.05)
    assert timing.rse_of_median(many + [1000.0] * 5) < 2 * timing.rse_of_median(many)
    assert timing.rse_of_median([1.0, 2.0]) == math.inf


def test_the_speedup_interval_brackets_the_ratio_and_widens_with_noise():
    steady = timing.summarize([1.0 + 0.001 * (i % 7) for i in range(200)])
    noisy = timing.summarize([0.5 + 0.2 * (i % 7) for i in range(200)])
    fast = timing.summarize([0.5 + 0.0005 * (i % 7) for i in range(200)])
    low, high = timing.speedup_interval(steady, fast)
    assert low < timing.speedup(steady, fast) < high
    assert high - low < 0.01
    wide_low, wide_high = timing.speedup_interval(steady, noisy)
    assert wide_high - wide_low > 10 * (high - low)


def _counting_turn(seconds: float, calls: list) -> timing.Turn:
    def run():
        calls.append(1)
        end = timing.time.perf_counter() + seconds
        while timing.time.perf_counter() < end:
            pass

    return timing.Turn(run=run)


@pytest.mark.parametrize("speedup, interval, shown", [
    (1.05, [1.01, 1.09], True),  # its interval clears p
    (1.05, [0.98, 1.12], False),  # its interval holds p
    (1.15, [0.0, math.inf], False),  # no interval: within the 20% such readings vary by
    (1.25, [0.0, None], True),  # no interval, beyond it
    (1.20, None, False),  # the harness's clock set it: within its bursts' 25%
    (1.30, None, True),
])
def test_a_speedup_is_shown_above_p_by_its_interval_or_else_by_a_margin(speedup, interval, shown):
    assert timing.above(speedup, interval, 1.0, timing.margin(interval, "cuda")) is shown
    assert timing.margin([0.9, 1.1], "cuda") == 0.0
    if not shown:
        assert timing.resolution_words(speedup, interval, 1.0, "cpu")


@pytest.mark.parametrize("ratio, interval, p, device, shown", [
    (0.80, [0.75, 0.85], 1.0, "cpu", True),  # clear of p and of the CPU's resolution
    (0.95, [0.94, 0.96], 1.0, "cpu", False),  # clear of p, within the CPU's run-to-run 7%
    (0.95, [0.94, 0.96], 1.0, "cuda:0", True),  # beyond the GPU's 3%
    (0.80, [0.60, 1.10], 1.0, "cpu", False),  # the interval holds p
    (0.80, [0.0, math.inf], 1.0, "cpu", False),  # too few calls for an interval
    (1.00, None, 1.4, "cuda", True),  # the harness's clock set it, 40% below p
    (1.20, None, 1.4, "cuda", False),  # within a GPU burst's 25%
    (0.772, None, 1.0, "cpu", False),  # what a CPU's bursts read of identical code
    (0.60, None, 1.0, "cpu", True),  # beyond a CPU burst's 50%
])
def test_a_speedup_is_shown_below_p_only_beyond_the_devices_resolution(ratio, interval, p,
                                                                        device, shown):
    assert timing.below(ratio, interval, p, device) is shown
    if not shown:
        assert timing.resolution_words(ratio, interval, p, device)


@pytest.mark.parametrize("reported, baseline, candidate, verdict, clock", [
    # honest, on a CPU whose bursts are 2x apart: the fastest of each side recur
    (1.0, [0.50, 0.87, 0.49, 0.98], [0.49, 1.34, 0.51, 0.77], "stands", 1.0),
    # a shifted clock reporting 1.8x what the bursts see
    (1.8, [0.50, 0.51, 0.70], [0.50, 0.90, 0.505], "replaced", 1.0),
    # a busy host: neither side's fastest burst has come again
    (1.8, [0.50, 0.80, 0.75], [0.35, 0.60, 0.55], "undecided", None),
])
def test_bursts_confirm_replace_or_leave_a_reported_speedup_undecided(reported, baseline,
                                                                      candidate, verdict, clock):
    said, ratio = timing.clock_verdict(reported, baseline, candidate, 1.25)
    assert said == verdict
    assert math.isnan(ratio) if clock is None else ratio == pytest.approx(clock, rel=0.05)


def test_timing_stops_once_the_target_rse_is_met_and_otherwise_spends_the_budget():
    calls: list = []
    precise = timing.measure_interleaved({"a": _counting_turn(2e-5, calls)}, "cpu", budget_s=5.0,
                                         min_rounds=5, target_rse=0.05, warmup_s=0.0)
    assert precise.stopped == "rse" and precise.rounds >= timing.RSE_MIN_ROUNDS
    assert len(precise.samples_s["a"]) == precise.rounds
    spent = timing.measure_interleaved({"a": _counting_turn(1e-4, [])}, "cpu", budget_s=0.05,
                                       min_rounds=3, target_rse=0.0, warmup_s=0.0)
    assert spent.stopped == "budget" and spent.rounds >= 3


def _jittered_turn(seconds: float, seed: int) -> timing.Turn:
    """Busy-waits seconds give or take 10%, so each median's RSE falls as rounds add up."""
    import random

    draw = random.Random(seed)

    def run():
        end = timing.time.perf_counter() + seconds * (1 + 0.1 * draw.uniform(-1, 1))
        while timing.time.perf_counter() < end:
            pass

    return timing.Turn(run=run)


def test_a_timing_whose_speedup_is_clear_of_every_threshold_stops_on_the_looser_error():
    clear = timing.measure_interleaved(
        {"baseline": _jittered_turn(2e-4, 1), "candidate": _jittered_turn(2e-5, 2)}, "cpu",
        budget_s=5.0, min_rounds=5, target_rse=0.005, warmup_s=0.0, thresholds=(0.0, 1.0, 2.0))
    assert clear.stopped == "decided"
    worse = max(timing.rse_of_median(s) for s in clear.samples_s.values())
    assert 0.005 < worse <= timing.DECIDED_RSE_FACTOR * 0.005
    # A threshold near whatever speedup it measures (every hundredth up to 20x): the full
    # precision, as without thresholds.
    near = timing.measure_interleaved(
        {"baseline": _jittered_turn(2e-4, 1), "candidate": _jittered_turn(2e-5, 2)}, "cpu",
        budget_s=5.0, min_rounds=5, target_rse=0.005, warmup_s=0.0,
        thresholds=[i / 100 for i in range(1, 2001)])
    assert near.stopped == "rse"


def test_decided_needs_both_sides_the_looser_error_and_every_threshold_outside_the_interval():
    fast = [1.0 + 0.001 * (i % 7) for i in range(200)]
    slow = [3.0 + 0.003 * (i % 7) for i in range(200)]
    both = {"baseline": slow, "candidate": fast}
    assert timing.decided(both, [0.0, 1.0], loose_rse=0.01)
    assert not timing.decided(both, [0.0, 1.0, 3.0], loose_rse=0.01)  # 3x is inside
    assert not timing.decided(both, [], loose_rse=0.01)
    assert not timing.decided({"candidate": fast}, [1.0], loose_rse=0.01)  # cached baseline
    noisy = {"baseline": slow, "candidate": [0.5 + 0.2 * (i % 7) for i in range(200)]}
    assert not timing.decided(noisy, [1.0], loose_rse=0.01)


def test_a_timing_for_upstreams_figure_stops_at_the_rounds_upstream_times():
    bounded = timing.measure_interleaved({"a": _counting_turn(1e-5, [])}, "cpu", budget_s=5.0,
                                         min_rounds=5, target_rse=0.0, warmup_s=0.0,
                                         max_rounds=30)
    assert bounded.stopped == "max_rounds" and bounded.rounds == 30
    assert len(bounded.samples_s["a"]) == 30
    at_least = timing.measure_interleaved({"a": _counting_turn(1e-5, [])}, "cpu", budget_s=5.0,
                                          min_rounds=40, target_rse=0.0, warmup_s=0.0,
                                          max_rounds=30)
    assert at_least.rounds == 40  # min_rounds is the user's floor, whatever bounds the rest


def test_turns_alternate_between_sides():
    order: list[str] = []
    turns = {name: timing.Turn(run=lambda name=name: order.append(name)) for name in ("a", "b")}
    timing.measure_interleaved(turns, "cpu", budget_s=0.0, min_rounds=4, warmup_s=0.0)
    assert order[-8:] == ["a", "b"] * 4


def test_warm_up_lasts_until_every_input_draw_has_an_output_held():
    order: list[str] = []
    turns = {"a": timing.Turn(run=lambda: order.append("a"))}
    measured = timing.measure_interleaved(turns, "cpu", budget_s=0.0, min_rounds=1, warmup_s=0.0)
    assert len(order) - measured.rounds == timing.WARMUP_MIN_ROUNDS


def test_a_rotating_side_refills_the_same_buffers_with_each_draw():
    sets = [[torch.full((4,), float(k))] for k in range(3)]
    seen = []
    side = timing.RotatingSide(lambda x: x.clone(), sets, graph=False, device="cpu")
    pointer = side.buffers[0].data_ptr()
    for _ in range(4):
        side.prepare()
        seen.append(float(side.call()[0]))
        assert side.buffers[0].data_ptr() == pointer
    assert seen == [1.0, 2.0, 0.0, 1.0]


def test_poison_overwrites_every_tensor_of_an_output():
    out = (torch.ones(3), [torch.ones(2, dtype=torch.int64)])
    timing.poison(out)
    assert torch.isnan(out[0]).all() and (out[1][0] == -1).all()


FIELDS = {"problem": "abc", "gpu": "H200", "timing": "events"}


def test_cached_baselines_are_found_by_their_fields_and_go_stale(tmp_path):
    baselines.write(tmp_path, FIELDS, [1e-3, 2e-3], now=1000.0)
    assert baselines.read(tmp_path, FIELDS, max_age_s=60, now=1030.0) == [1e-3, 2e-3]
    assert baselines.read(tmp_path, FIELDS, max_age_s=60, now=1100.0) is None
    assert baselines.read(tmp_path, {**FIELDS, "gpu": "A100"}, max_age_s=60, now=1030.0) is None
    (tmp_path / f"{baselines.cache_key(FIELDS)}.json").write_text("{not json")
    assert baselines.read(tmp_path, FIELDS, max_age_s=60, now=1030.0) is None


def test_the_cost_of_a_matmul_counts_its_flops_and_the_bytes_it_must_move():
    model = torch.nn.Linear(64, 32, bias=False)
    cost = roofline.problem_cost(model, [torch.randn(16, 64)])
    assert cost.flops == 2 * 16 * 64 * 32
    assert cost.min_bytes == 4 * (16 * 64 + 16 * 32 + 64 * 32)


def test_the_speed_of_light_fraction_uses_the_binding_ceiling():
    ceilings = roofline.Ceilings(bytes_per_s=1e12, flops_per_s=1e14)
    memory_bound = roofline.Cost(flops=0, min_bytes=10**9)  # 1 ms at the copy ceiling
    assert roofline.fraction(memory_bound, 2e-3, ceilings) == pytest.approx(0.5)
    compute_bound = roofline.Cost(flops=10**12, min_bytes=10**6)  # 10 ms at the matmul ceiling
    assert roofline.fraction(compute_bound, 1e-2, ceilings) == pytest.approx(1.0)


def test_a_call_faster_than_a_ceiling_raises_it_so_no_fraction_passes_one():
    # On an H200 a Triton Swish moved its bytes at 4.07 TB/s where torch's copy read 3.83.
    ceilings = roofline.Ceilings(bytes_per_s=3.83e12, flops_per_s=5.1e13)
    swish = roofline.Cost(flops=0, min_bytes=805306368)
    assert roofline.fraction(swish, 198e-6, ceilings) > 1.05
    higher = roofline.raised(ceilings, swish, 198e-6)
    assert higher.bytes_per_s == pytest.approx(805306368 / 198e-6)
    assert higher.flops_per_s == ceilings.flops_per_s
    assert roofline.fraction(swish, 198e-6, higher) == pytest.approx(1.0)
    assert roofline.fraction(swish, 473e-6, higher) == pytest.approx(198 / 473)
    assert roofline.raised(higher, swish, 473e-6) == higher  # a slower call changes nothing


def test_measured_ceilings_are_positive_on_the_cpu():
    ceilings = roofline.measure_ceilings("cpu")
    assert ceilings.bytes_per_s > 1e8 and ceilings.flops_per_s > 1e8


def test_replayed_outputs_must_agree_with_eager_ones():
    a = torch.arange(6.0)
    assert timing.outputs_agree((a, [a.long()]), (a + 1e-7, [a.long()]))
    assert not timing.outputs_agree(a, a + 1.0)
    assert not timing.outputs_agree(a.long(), a.long() + 1)
    assert not timing.outputs_agree(a, a.reshape(2, 3))
    assert timing.outputs_agree(torch.tensor([float("nan")]), torch.tensor([float("nan")]))


def test_a_cuda_call_is_timed_from_an_idle_gpu_after_the_flush():
    # The start event is recorded only once the L2 flush is done, so the events bracket the
    # call as its host runs it (launches included) and never part of the flush: the order of
    # the timer's calls is what decides that, read here through a stand-in for torch.
    seen: list[str] = []

    class Event:
        def __init__(self, name):
            self.name = name

        def record(self, stream):
            seen.append(self.name)

        def elapsed_time(self, other):
            return 2.0

    cuda = SimpleNamespace(current_stream=lambda device: "stream",
                           synchronize=lambda device: seen.append("synchronize"))
    timer = object.__new__(timing.CudaTimer)
    timer.torch, timer.device = SimpleNamespace(cuda=cuda), "cuda:0"
    timer.flush = SimpleNamespace(zero_=lambda: seen.append("flush"))
    timer.start, timer.end = Event("start"), Event("end")
    seconds, output = timer.time(lambda: seen.append("call") or "out")
    assert (seconds, output) == (2e-3, "out")
    assert seen == ["flush", "synchronize", "start", "call", "end", "synchronize"]
