"""gpu/kernels.py, its CPU-only parts: which launched kernels are the candidate's own, a
kernel's base name, and a CUDA graph's kernel names read through a stand-in driver."""

from __future__ import annotations

import pytest

from pytest_kernelbench.gpu import kernels
from pytest_kernelbench.gpu.cupti import demangle
from pytest_kernelbench.gpu.kernels import LIBRARY_KERNEL, base_name, custom_kernels


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
    assert base_name("void ns::relu_kernel<4, (anonymous namespace)::F>(float*, int)") == \
        "relu_kernel"
    assert base_name("(anonymous namespace)::scale(float*)") == "scale"
    assert base_name("triton_per_fused_sum_0") == "triton_per_fused_sum_0"


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
    fake = FakeDriver({1: [(kernels.NODE_KERNEL, "_Z11relu_kernelPKfPfi"),
                           (kernels.NODE_MEMSET, None), (kernels.NODE_CHILD_GRAPH, 2),
                           (kernels.NODE_KERNEL, "_Z11relu_kernelPKfPfi")],
                       2: [(kernels.NODE_KERNEL, "triton_poi_fused_add_0"),
                           (kernels.NODE_MEMCPY, None)]})
    monkeypatch.setattr(kernels, "cuda_driver", lambda: fake)
    assert kernels.graph_node_names(1) == [
        "Memcpy", "Memset", "relu_kernel(float const*, float*, int)", "triton_poi_fused_add_0"]
    fake.graphs[2].append((kernels.NODE_CONDITIONAL, None))  # its bodies are not read
    with pytest.raises(kernels.DriverError):
        kernels.graph_node_names(1)


def test_mangled_kernel_names_read_as_the_profiler_shows_them():
    aten = demangle("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEE"
                    "St5arrayIPcLm1EEEEviT0_T1_")
    assert aten.startswith("void at::native::vectorized_elementwise_kernel<4,")
    assert LIBRARY_KERNEL.search(aten)
    assert demangle("triton_per_fused_sum_0") == "triton_per_fused_sum_0"
    assert demangle("_Znot_a_symbol") == "_Znot_a_symbol"
