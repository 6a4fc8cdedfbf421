"""Which GPU kernels a candidate launched: its own, or only PyTorch's and its libraries'.

Generated kernels often wrap their build in try/except and fall back to PyTorch, then report
success. The worker records the kernel names one call launches; a candidate that launched no
kernel its own source names (only ATen's, cuBLAS's, cuDNN's, or those torch.compile generates)
is `torch_only`.

The names come from a CUDA graph of one call, read node by node through the driver API: a few
milliseconds, where a profiler session costs seconds in a fresh process (CUPTI starts up). The
graph is replayed once, on another draw, to check that it holds all of the call's work. A call
that cannot be captured (it synchronises), or whose graph misses work (a launch on the legacy
default stream), is profiled instead.
"""

from __future__ import annotations

import ctypes
import functools
import re

from pytest_kernelbench.gpu import cupti, timing
from pytest_kernelbench.gpu.cupti import demangle

LIBRARY_KERNEL = re.compile(
    r"at::native|at::cuda|at_cuda_detail|c10::|cutlass|cublas|cudnn|cunn_|xmma|nvjet|"
    r"^(void )?(sm\d+_|ampere_|hopper_|volta_|turing_|maxwell_)|gemv|gemmk|gemmSN|splitKreduce|"
    r"implicit_convolve|cudnn|conv2d_grouped|fft|cub::|thrust::|Memcpy|Memset|"
    r"flash_fwd|fmha|pytorch_flash|nchwToNhwc|nhwcToNchw|scalePackedTensor|winograd|"
    r"elementwise_kernel|reduce_kernel|vectorized_|unrolled_|kernel_launch_wrapper"
)

# CUgraphNodeType values (cuda.h)
NODE_KERNEL, NODE_MEMCPY, NODE_MEMSET, NODE_CHILD_GRAPH, NODE_CONDITIONAL = 0, 1, 2, 4, 13


def custom_kernels(candidate: list[str], baseline: list[str], source: str) -> list[str]:
    """Kernels the candidate launched that are its own: not launched by the baseline, not
    from PyTorch's libraries, and named in the candidate's source (a CUDA `__global__`, a
    Triton `@triton.jit` function, a raw kernel's text).

    The last test is what tells the candidate's code from PyTorch's other kernels: cuDNN picks
    kernels the eager reference never launched (`convolve_common_engine_float_NHWC`,
    `memcpy32_post`) once a candidate switches to channels-last or `cudnn.benchmark`, and
    torch.compile and TorchScript generate kernels (`triton_poi_fused_...`, `fused_mul_gelu`)
    that no source names; none of them is a kernel the candidate wrote.
    """
    known = set(baseline)
    return [name for name in candidate if name not in known and not LIBRARY_KERNEL.search(name)
            and re.search(rf"\b{re.escape(base_name(name))}\b", source)]


def base_name(kernel: str) -> str:
    """A kernel's own identifier: 'void ns::relu_kernel<4>(float*, int)' -> 'relu_kernel'."""
    text = kernel.replace("(anonymous namespace)", "anonymous")
    depth, kept = 0, []
    for char in text:
        if char == "<":
            depth += 1
        elif char == ">":
            depth = max(depth - 1, 0)
        elif depth == 0:
            if char == "(":
                break
            kept.append(char)
    words = "".join(kept).split()
    return words[-1].split("::")[-1] if words else kernel


def launched_kernels(model, inputs: list, other_inputs: list, device: str,
                     profile: bool = True) -> tuple[list[str] | None, str]:
    """(names of the GPU kernels one forward call launches, how they were found: 'graph',
    'cupti' or 'profiler'), after one warm call; (None, 'none') where the call cannot be
    captured, CUPTI cannot trace it here, and profile is False. other_inputs, another draw,
    checks the graph (captured_kernels)."""
    import torch

    timing.forward_async(model, inputs)  # lazy builds and autotuning stay out of what is read
    torch.cuda.synchronize(device)
    names = captured_kernels(model, inputs, other_inputs, device)
    if names is not None:
        return names, "graph"
    try:
        return cupti.traced_kernels(lambda: timing.forward_async(model, inputs), device), "cupti"
    except cupti.CuptiError:
        pass
    if not profile:
        return None, "none"
    return profiled_kernels(lambda: timing.forward_async(model, inputs), device), "profiler"


def profiled_kernels(call, device: str) -> list[str]:
    import torch
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        call()
        torch.cuda.synchronize(device)
    return sorted({event.name for event in prof.events()
                   if event.device_type == torch.autograd.DeviceType.CUDA})


def captured_kernels(model, inputs: list, other_inputs: list, device: str) -> list[str] | None:
    """The kernel names in a CUDA graph of one call, or None where it cannot be captured or
    read, or where the graph does not hold all the call's work.

    A kernel launched outside the capturing stream (`<<<grid, block>>>` with no stream: the
    legacy default stream) fails silently during capture and is missing from the graph, so
    the graph must reproduce the call: replayed on another draw, with its output poisoned
    first, it must give what an eager call on that draw gives.
    """
    import torch

    buffers = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
    try:
        graph = torch.cuda.CUDAGraph(keep_graph=True)
    except TypeError:  # a torch without keep_graph
        return None
    try:
        with torch.cuda.device(device):
            side = torch.cuda.Stream(device)
            side.wait_stream(torch.cuda.current_stream(device))
            with torch.cuda.graph(graph, stream=side):
                output = timing.forward_async(model, buffers)
            torch.cuda.current_stream(device).wait_stream(side)
            names = graph_node_names(graph.raw_cuda_graph())
            timing.refill(buffers, other_inputs)
            expected = timing.clone_output(timing.forward_async(model, buffers))
            timing.poison(output)
            graph.replay()
            torch.cuda.synchronize(device)
        return names if timing.outputs_agree(expected, output) else None
    except Exception:  # noqa: BLE001 - a capture refused by CUDA, or a call that broke it
        return None
    finally:
        del graph


class _KernelNodeParams(ctypes.Structure):  # CUDA_KERNEL_NODE_PARAMS_v2
    _fields_ = [("func", ctypes.c_void_p), ("grid", ctypes.c_uint * 3),
                ("block", ctypes.c_uint * 3), ("shared_bytes", ctypes.c_uint),
                ("params", ctypes.c_void_p), ("extra", ctypes.c_void_p),
                ("kern", ctypes.c_void_p), ("ctx", ctypes.c_void_p)]


class DriverError(RuntimeError):
    pass


@functools.cache
def cuda_driver():
    """The CUDA driver library, loaded once (graph_node_names reads graphs through it)."""
    return ctypes.CDLL("libcuda.so.1")


def _check(result: int, what: str) -> None:
    if result != 0:
        raise DriverError(f"{what}: CUresult {result}")


def graph_node_names(raw_graph: int) -> list[str]:
    """Sorted distinct names of a CUDA graph's kernels (memcpy and memset nodes as 'Memcpy'
    and 'Memset', as the profiler names them), child graphs included."""
    cu = cuda_driver()
    names: set[str] = set()
    pending = [ctypes.c_void_p(raw_graph)]
    while pending:
        graph = pending.pop()
        count = ctypes.c_size_t(0)
        _check(cu.cuGraphGetNodes(graph, None, ctypes.byref(count)), "cuGraphGetNodes")
        nodes = (ctypes.c_void_p * count.value)()
        _check(cu.cuGraphGetNodes(graph, nodes, ctypes.byref(count)), "cuGraphGetNodes")
        for handle in nodes[:count.value]:
            node = ctypes.c_void_p(handle)
            kind = ctypes.c_int(-1)
            _check(cu.cuGraphNodeGetType(node, ctypes.byref(kind)), "cuGraphNodeGetType")
            if kind.value == NODE_KERNEL:
                names.add(demangle(_kernel_name(cu, node)))
            elif kind.value == NODE_MEMCPY:
                names.add("Memcpy")
            elif kind.value == NODE_MEMSET:
                names.add("Memset")
            elif kind.value == NODE_CHILD_GRAPH:
                child = ctypes.c_void_p()
                _check(cu.cuGraphChildGraphNodeGetGraph(node, ctypes.byref(child)),
                       "cuGraphChildGraphNodeGetGraph")
                pending.append(child)
            elif kind.value == NODE_CONDITIONAL:  # kernels in bodies not read here
                raise DriverError("a conditional node")
    return sorted(names)


def _kernel_name(cu, node: ctypes.c_void_p) -> str:
    params = _KernelNodeParams()
    _check(cu.cuGraphKernelNodeGetParams_v2(node, ctypes.byref(params)),
           "cuGraphKernelNodeGetParams")
    name = ctypes.c_char_p()
    if params.func:
        _check(cu.cuFuncGetName(ctypes.byref(name), ctypes.c_void_p(params.func)), "cuFuncGetName")
    else:
        _check(cu.cuKernelGetName(ctypes.byref(name), ctypes.c_void_p(params.kern)),
               "cuKernelGetName")
    return (name.value or b"").decode(errors="replace")
