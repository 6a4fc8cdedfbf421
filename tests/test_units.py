"""Pure helpers: compiler-log trimming, exception classes, timing statistics and plausibility."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from pytest_kernelbench import faults
from pytest_kernelbench.gpu import timing
from pytest_kernelbench.judge import upstream
from pytest_kernelbench.judge.attribute_stage import worth_profiling
from pytest_kernelbench.precision import EXACT_FP32
from pytest_kernelbench.suite import correctness, loading

NINJA_LOG = """Error building extension 'ext': [1/2] c++ -MMD -MF main.o.d -isystem /usr/include
/tmp/ext/main.cpp:6:22: error: expected ';' before '}' token
    6 |     return x * factor
/tmp/ext/main.cpp:9:1: error: 'y' was not declared in this scope
ninja: build stopped: subcommand failed."""


def test_only_the_compiler_diagnostics_of_a_build_log_are_kept():
    assert faults.first_error_lines(NINJA_LOG) == (
        "/tmp/ext/main.cpp:6:22: error: expected ';' before '}' token\n"
        "/tmp/ext/main.cpp:9:1: error: 'y' was not declared in this scope")


def test_nvcc_diagnostics_are_recognised_and_deduplicated():
    log = 'k.cu(12): error: identifier "foo" is undefined\nk.cu(12): error: identifier "foo" is undefined'
    assert faults.first_error_lines(log) == 'k.cu(12): error: identifier "foo" is undefined'


@pytest.mark.parametrize(("exc", "stage", "status"), [
    (SystemExit(3), "forward", "exited"),
    (SyntaxError("bad"), "import", "syntax_error"),
    (RuntimeError("CUDA error: an illegal memory access was encountered"), "forward", "cuda_error"),
    (RuntimeError("CUDA out of memory. Tried to allocate 4 TiB"), "forward", "out_of_memory"),
    # a library's handle or workspace that could not be allocated: memory, not a broken context
    (RuntimeError("CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`"),
     "forward", "out_of_memory"),
    (RuntimeError("cuDNN error: CUDNN_STATUS_ALLOC_FAILED"), "forward", "out_of_memory"),
    (RuntimeError("CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm`"),
     "forward", "cuda_error"),
    (RuntimeError("Error building extension 'x'"), "import", "compile_error"),
    (ImportError("no module"), "import", "import_error"),
    (ValueError("bad shape"), "init", "init_error"),
    (ValueError("bad shape"), "forward", "runtime_error"),
])
def test_exceptions_map_to_statuses(exc, stage, status):
    assert faults.classify_exception(exc, stage) == status


@pytest.mark.parametrize(("code", "text"), [(-11, "killed by SIGSEGV"), (7, "exit code 7")])
def test_exit_codes_are_described(code, text):
    assert faults.describe_exit(code) == text


def test_summaries_give_median_iqr_and_count():
    summary = timing.summarize([4.0, 1.0, 3.0, 2.0, 100.0])
    assert (summary.median_s, summary.min_s, summary.n) == (3.0, 1.0, 5)
    assert summary.iqr_s == pytest.approx(2.0)
    assert timing.speedup(timing.summarize([2.0]), timing.summarize([1.0])) == 2.0


@pytest.mark.parametrize(("reported", "wall", "device", "plausible"), [
    (1e-3, 1.1e-3, "cuda", True),      # a long kernel, a little loop overhead
    (3e-6, 15e-6, "cuda", True),       # launch-bound: overhead dominates the wall clock
    (1e-5, 1e-3, "cuda", False),       # a hundred times more time passed than was reported
    (1.5e-6, 120e-6, "cpu", False),
])
def test_reported_times_must_fit_the_harness_clock(reported, wall, device, plausible):
    assert timing.plausible(reported, wall, device) is plausible


@pytest.mark.parametrize(("speedup", "interval", "require_kernel", "expected"), [
    (1.004, [0.996, 1.012], False, False),  # above p = 1 only by noise: not worth a session
    (1.30, [1.25, 1.35], False, True),      # clearly faster: flag torch_only if it is
    (1.004, [0.996, 1.012], True, True),    # --kb-require-kernel: the answer is the verdict
    (0.95, [0.90, 1.01], True, False),      # slower than p fails anyway
    (1.20, None, False, True),              # no interval (baseline replaced): the ratio decides
])
def test_kernels_are_profiled_only_where_the_answer_matters(speedup, interval, require_kernel,
                                                            expected):
    assert worth_profiling(speedup, interval, 1.0, require_kernel) is expected


def test_the_items_of_one_case_share_a_scheduling_scope():
    from pytest_kernelbench.plugin.hooks import case_scope

    stages = [f"level1/1_Scale::test_{stage}[good-s0]" for stage in ("compile", "correct", "speed")]
    assert {case_scope(nodeid) for nodeid in stages} == {"level1/1_Scale[good-s0]"}
    assert case_scope("level1/1_Scale::test_speed[good-s1]") != case_scope(stages[0])
    assert case_scope("tests/test_x.py::test_plain") == "tests/test_x.py::test_plain"


def test_xdist_hands_out_the_case_the_run_chooses_and_the_first_queued_otherwise():
    from collections import OrderedDict

    from pytest_kernelbench.plugin.hooks import case_scheduling, case_scope, scope_of
    from pytest_kernelbench.suite.discovery import Candidate, Case, Problem

    cases = [Case(Problem(1, pid, name, Path(f"level1/{pid}_{name}.py")), "good", "s0",
                  Candidate("good", 1, pid, "s0", Path(f"good/{pid}.py")))
             for pid, name in ((1, "Scale"), (2, "ReLU"), (3, "Wide"))]
    ids = [f"{case.problem.key}::test_{stage}[{case.id}]" for case in cases
           for stage in ("compile", "correct", "speed")]

    class Node:
        sent: list[int] = []

        def send_runtest_some(self, indexes: list[int]) -> None:
            self.sent = indexes

    chosen: list[str | None] = [scope_of(cases[2]), None]
    # xdist's own scheduler state, as its collection sets it up (the override uses these)
    scheduler = object.__new__(case_scheduling(lambda queued: chosen.pop(0)))
    node = Node()
    scheduler.workqueue = OrderedDict(
        (scope_of(case), {i: False for i in ids if case_scope(i) == scope_of(case)})
        for case in cases)
    scheduler.assigned_work, scheduler.registered_collections = {}, {node: ids}
    scheduler._assign_work_unit(node)
    assert [ids[i] for i in node.sent] == ids[6:9]  # the third case's items, chosen
    scheduler._assign_work_unit(node)
    assert [ids[i] for i in node.sent] == ids[0:3]  # none chosen: the first queued


class _RecordsWhereItWasBuilt(torch.nn.Module):
    def __init__(self, width):
        super().__init__()
        self.built_on = torch.empty(0).device.type  # where a bare tensor lands while constructing
        self.linear = torch.nn.Linear(width, width)


class _LegacyLinear(torch.nn.Module):
    """Parameters from the legacy CPU-only constructor, initialised as nn.Linear does."""

    def __init__(self, width):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.Tensor(width, width))
        self.bias = torch.nn.Parameter(torch.Tensor(width))
        torch.nn.init.kaiming_uniform_(self.weight, a=5 ** 0.5)
        bound = 1 / width ** 0.5
        torch.nn.init.uniform_(self.bias, -bound, bound)


def test_models_are_built_on_the_cpu_and_then_moved_to_the_device():
    # 'meta' stands in for a GPU: the weights must come from the CPU generator either way.
    model = loading.build_model(_RecordsWhereItWasBuilt, [8], 42, "meta", "train", EXACT_FP32)
    assert model.built_on == "cpu" and model.linear.weight.device.type == "meta"
    reference = loading.build_model(_RecordsWhereItWasBuilt, [8], 42, "cpu", "train", EXACT_FP32)
    legacy = loading.build_model(_LegacyLinear, [8], 42, "cpu", "train", EXACT_FP32)
    assert torch.equal(reference.linear.weight, legacy.weight)
    assert torch.equal(reference.linear.bias, legacy.bias)


def test_upstream_rules_check_elements_only_and_report_a_ratio_of_means():
    expected = torch.full((1000,), 1e-3)
    zeros = torch.zeros(1000)
    # Outputs small next to atol: zeros pass upstream's allclose, not our whole-tensor check.
    assert upstream.allclose_only(expected, zeros, "v0") is True
    assert correctness.compare(expected, zeros, 1e-2, 1e-2).status == faults.MISMATCH
    assert upstream.allclose_only(expected, zeros, "main") is False  # 1e-4 there
    assert upstream.allclose_only([expected], [zeros.reshape(10, 100)], "v0") is False
    assert upstream.speedup_of_means([2.0, 4.0], [1.0, 2.0]) == 2.0
    assert upstream.speedup_of_means([], [1.0]) is None


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.float64])
def test_upstreams_check_read_in_blocks_says_what_torch_allclose_says(dtype):
    from pytest_kernelbench.suite.correctness import BLOCK

    torch.manual_seed(0)
    expected = torch.randn(3, BLOCK + 7).to(dtype)
    for where in (0, BLOCK - 1, BLOCK, 3 * BLOCK + 6):  # first, both sides of a block edge, last
        for off in (0.0, 0.02, float("nan"), float("inf")):
            got = expected.clone()
            got.view(-1)[where] += off
            for rules in ("v0", "main"):
                atol, rtol = upstream.PROFILES[rules]["fp32" if dtype != torch.float16 else "fp16"]
                assert upstream.allclose_only(expected, got, rules, "fp32" if dtype != torch.float16
                                              else "fp16") \
                    is bool(torch.allclose(got, expected, atol=atol, rtol=rtol)), (where, off, rules)
    transposed = expected.view(-1)[:BLOCK * 2].reshape(512, -1)
    assert upstream.allclose_only(transposed.t(), transposed.t().contiguous(), "v0") is True


def test_a_cheat_verdict_names_unordered_streams_where_the_candidate_makes_them():
    from pytest_kernelbench.judge.outcome import stream_hint

    assert "not ordered after the caller's" in stream_hint(
        {"static_scan": ["line 5: creates CUDA streams (work may escape timing)"]})
    assert stream_hint({"static_scan": ["line 3: starts threads"]}) == ""


def test_the_record_type_and_the_shipped_schema_name_the_same_fields():
    from pytest_kernelbench import record
    from pytest_kernelbench.reporting import report

    assert set(record.Record.__annotations__) == record.record_fields()
    assert record.schema()["properties"]["schema_version"]["const"] == report.SCHEMA_VERSION
    documented = Path(__file__).parents[1].joinpath("docs", "report-schema.md").read_text()
    missing = [name for name in record.record_fields() if f"`{name}`" not in documented]
    assert not missing, f"docs/report-schema.md does not describe {missing}"


@pytest.mark.parametrize(("timed", "baseline_wall", "slow"), [
    (38e-6, 380e-6, True),   # a busy host: the worker's timer agrees, the baseline slowed alike
    (0.4e-6, 380e-6, False),  # the worker's timer disagrees with the harness's clock: tampered
    (38e-6, 105e-6, False),   # only the candidate's bursts slowed: work hidden between calls
])
def test_a_busy_host_is_told_from_hidden_time(timed, baseline_wall, slow):
    from pytest_kernelbench.gpu.timing import host_was_slow

    assert host_was_slow(10e-6, 40e-6, timed, 100e-6, baseline_wall, "cpu") is slow


@pytest.mark.parametrize(("reported", "wall", "baseline_reported", "baseline_wall", "slow"), [
    # SwinTransformerV2's candidate on an H200 (ms): its eager reference's burst ran 1.6x its
    # timed calls, the candidate's 2.1x
    (12.67e-3, 26.89e-3, 11.18e-3, 17.93e-3, True),
    # work on a stream the events do not see, beside a baseline that runs as timed
    (1.0e-3, 9.0e-3, 2.0e-3, 2.1e-3, False),
])
def test_on_a_gpu_a_launch_bound_burst_is_told_from_hidden_work(reported, wall, baseline_reported,
                                                                 baseline_wall, slow):
    from pytest_kernelbench.gpu.timing import host_was_slow

    # a GPU burst carries no figure of the worker's own timer
    assert host_was_slow(reported, wall, float("inf"), baseline_reported, baseline_wall,
                         "cuda") is slow


def test_the_summary_says_when_speedups_rest_on_too_few_calls_for_an_interval():
    from pytest_kernelbench.reporting import report

    def timed(n: int, interval: list[float]) -> dict:
        return {"speedup": 0.45, "speedup_interval": interval,
                "baseline_stats": {"n": n}, "candidate_stats": {"n": n}}

    thin = [timed(3, [0.0, float("inf")]), timed(3, [0.0, float("inf")])]
    assert report.noise_lines(thin + [timed(40, [0.97, 1.03])]) == [
        "note: 2 of 3 speedups rest on 3 timed call(s) a side, too few for an interval: "
        "readings off 1.0 there may be noise (more with --benchmark-max-time or "
        "--benchmark-min-rounds)"]
    assert report.noise_lines([timed(40, [0.97, 1.03]), {"speedup": None}]) == []
