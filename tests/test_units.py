"""Pure helpers: compiler-log trimming, exception classes, kernel attribution, static scan,
timing statistics and plausibility."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from pytest_kernelbench import faults
from pytest_kernelbench.gpu import timing
from pytest_kernelbench.gpu.kernels import custom_kernels
from pytest_kernelbench.judge import upstream
from pytest_kernelbench.judge.evaluation import worth_profiling
from pytest_kernelbench.precision import EXACT_FP32
from pytest_kernelbench.suite import correctness, loading
from pytest_kernelbench.suite.scan import scan_source

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


def test_kernels_of_the_candidates_own_are_told_from_pytorchs():
    baseline = ["void at::native::vectorized_elementwise_kernel<4, relu>(...)"]
    source = 'cuda = "__global__ void swish_kernel(const float* x) {...}"'
    candidate = ["void swish_kernel<float>(float const*)", "sm90_xmma_gemm_f32f32_tf32f32",
                 *baseline, "void cutlass::Kernel<Gemm>(Params)"]
    assert custom_kernels(candidate, baseline, source) == ["void swish_kernel<float>(float const*)"]
    assert custom_kernels(baseline, baseline, source) == []


def test_kernels_no_source_names_are_pytorchs_own_choices():
    # Seen on real candidates that only call PyTorch: cuDNN's kernels for channels-last or
    # cudnn.benchmark, and kernels that torch.compile and TorchScript generate.
    launched = ["void convolve_common_engine_float_NHWC<float, float, 1024, 5>(int, float const*)",
                "memcpy32_post", "triton_poi_fused_convolution_relu_0", "fused_mul_leaky_relu_gelu"]
    source = "x = x.contiguous(memory_format=torch.channels_last)\nself.f = torch.compile(f)"
    assert custom_kernels(launched, [], source) == []
    triton_source = "@triton.jit\ndef fused_relu(x_ptr, n, BLOCK: tl.constexpr): ..."
    assert custom_kernels(["fused_relu"], [], triton_source) == ["fused_relu"]


def test_a_kernels_identifier_is_read_from_its_demangled_name():
    from pytest_kernelbench.gpu.kernels import base_name

    assert base_name("void ns::relu_kernel<4, (anonymous namespace)::F>(float*, int)") == \
        "relu_kernel"
    assert base_name("(anonymous namespace)::scale(float*)") == "scale"
    assert base_name("triton_per_fused_sum_0") == "triton_per_fused_sum_0"


def test_the_static_scan_names_suspicious_constructs_with_their_line():
    source = "import torch\nimport time\n\ntime.perf_counter = lambda: 0\ns = torch.cuda.Stream()\n"
    notes = scan_source(source)
    assert "line 4: assigns to an attribute of torch/time/sys/os (monkeypatching)" in notes
    assert "line 5: creates CUDA streams (work may escape timing)" in notes
    assert scan_source("import torch\n\ndef f(x):\n    return torch.relu(x)\n") == []


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
    from pytest_kernelbench.judge.evaluation import stream_hint

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


class FakeDriver:
    """The few driver calls kernels.graph_node_names makes, over graphs given as lists of
    (node type, payload): a kernel's mangled name, or a child graph's own list."""

    def __init__(self, graphs: dict[int, list]):
        self.graphs = graphs
        self.nodes: dict[int, tuple] = {}

    def cuGraphGetNodes(self, graph, nodes, count):
        entries = self.graphs[graph.value]
        if nodes is not None:
            for index, entry in enumerate(entries):
                handle = 1000 * graph.value + index + 1
                self.nodes[handle] = entry
                nodes[index] = handle
        count._obj.value = len(entries)
        return 0

    def cuGraphNodeGetType(self, node, kind):
        kind._obj.value = self.nodes[node.value][0]
        return 0

    def cuGraphKernelNodeGetParams_v2(self, node, params):
        params._obj.func = node.value
        return 0

    def cuFuncGetName(self, name, func):
        name._obj.value = self.nodes[func.value][1].encode()
        return 0

    def cuGraphChildGraphNodeGetGraph(self, node, child):
        child._obj.value = self.nodes[node.value][1]
        return 0


def test_kernel_names_are_read_from_every_node_of_a_graph_and_its_children(monkeypatch):
    from pytest_kernelbench.gpu import kernels

    fake = FakeDriver({1: [(kernels.NODE_KERNEL, "_Z11relu_kernelPKfPfi"),
                           (kernels.NODE_MEMSET, None), (kernels.NODE_CHILD_GRAPH, 2),
                           (kernels.NODE_KERNEL, "_Z11relu_kernelPKfPfi")],
                       2: [(kernels.NODE_KERNEL, "triton_poi_fused_add_0"),
                           (kernels.NODE_MEMCPY, None)]})
    monkeypatch.setattr(kernels, "_driver", lambda: fake)
    assert kernels.graph_node_names(1) == [
        "Memcpy", "Memset", "relu_kernel(float const*, float*, int)", "triton_poi_fused_add_0"]
    fake.graphs[2].append((kernels.NODE_CONDITIONAL, None))  # its bodies are not read
    with pytest.raises(kernels.DriverError):
        kernels.graph_node_names(1)


def test_mangled_kernel_names_read_as_the_profiler_shows_them():
    from pytest_kernelbench.gpu.cupti import demangle
    from pytest_kernelbench.gpu.kernels import LIBRARY_KERNEL

    aten = demangle("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEE"
                    "St5arrayIPcLm1EEEEviT0_T1_")
    assert aten.startswith("void at::native::vectorized_elementwise_kernel<4,")
    assert LIBRARY_KERNEL.search(aten)
    assert demangle("triton_per_fused_sum_0") == "triton_per_fused_sum_0"
    assert demangle("_Znot_a_symbol") == "_Znot_a_symbol"
