"""Softsign as one CUDA kernel: eager runs abs, add and divide as three kernels (six passes over
memory); this reads x once and writes the result once, four floats per thread."""
# expect: passed  (what the harness must say; benchmarks/expected_verdicts.py)

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SOURCE = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>

__global__ void softsign_vec4(const float4* __restrict__ x, float4* __restrict__ out, int64_t n4) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (; i < n4; i += stride) {
        float4 v = x[i];
        v.x = v.x / (1.0f + fabsf(v.x));
        v.y = v.y / (1.0f + fabsf(v.y));
        v.z = v.z / (1.0f + fabsf(v.z));
        v.w = v.w / (1.0f + fabsf(v.w));
        out[i] = v;
    }
}

__global__ void softsign_tail(const float* __restrict__ x, float* __restrict__ out,
                              int64_t start, int64_t n) {
    int64_t i = start + blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = x[i] / (1.0f + fabsf(x[i]));
}

// fp16 and bf16: one element per thread, computed in fp32.
template <typename scalar_t>
__global__ void softsign_scalar(const scalar_t* __restrict__ x, scalar_t* __restrict__ out,
                                int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (; i < n; i += stride) {
        float v = static_cast<float>(x[i]);
        out[i] = static_cast<scalar_t>(v / (1.0f + fabsf(v)));
    }
}

torch::Tensor softsign(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "expected a CUDA tensor");
    x = x.contiguous();
    auto out = torch::empty_like(x);
    int64_t n = x.numel();
    auto stream = c10::cuda::getCurrentCUDAStream();
    const int threads = 256;
    if (x.scalar_type() != torch::kFloat) {
        int64_t blocks = std::min<int64_t>((n + threads - 1) / threads, 132 * 32);
        AT_DISPATCH_REDUCED_FLOATING_TYPES(x.scalar_type(), "softsign", [&] {
            softsign_scalar<scalar_t><<<blocks, threads, 0, stream>>>(
                x.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(), n);
        });
        C10_CUDA_KERNEL_LAUNCH_CHECK();
        return out;
    }
    int64_t n4 = n / 4;
    if (n4 > 0) {
        int64_t blocks = std::min<int64_t>((n4 + threads - 1) / threads, 132 * 32);
        softsign_vec4<<<blocks, threads, 0, stream>>>(
            reinterpret_cast<const float4*>(x.data_ptr<float>()),
            reinterpret_cast<float4*>(out.data_ptr<float>()), n4);
    }
    int64_t tail = n - n4 * 4;
    if (tail > 0) {
        softsign_tail<<<1, threads, 0, stream>>>(x.data_ptr<float>(), out.data_ptr<float>(),
                                                 n4 * 4, n);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

CPP_SOURCE = "torch::Tensor softsign(torch::Tensor x);"

softsign_ext = load_inline(
    name="kb_example_softsign",
    cpp_sources=CPP_SOURCE,
    cuda_sources=CUDA_SOURCE,
    functions=["softsign"],
    extra_cuda_cflags=["-O3", "-gencode=arch=compute_90,code=sm_90"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return softsign_ext.softsign(x)
