"""Row-wise x / mean(|x|) in one read and one write: eager runs abs, mean and divide (three
kernels, five passes over memory); here one block owns a row, keeps it in registers while it sums
|x|, and writes the scaled row straight back out."""
# expect: passed

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SOURCE = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAException.h>

namespace {

constexpr int kThreads = 256;
constexpr int kCache = 16;  // values per thread held in registers: rows up to 4096 read once

__device__ __forceinline__ float warp_sum(float v) {
    #pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// Sum over the block; every thread gets the result.
__device__ __forceinline__ float block_sum_all(float v) {
    __shared__ float warp_part[kThreads / 32];
    __shared__ float total;
    v = warp_sum(v);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) warp_part[warp] = v;
    __syncthreads();
    if (warp == 0) {
        float w = lane < kThreads / 32 ? warp_part[lane] : 0.f;
        w = warp_sum(w);
        if (lane == 0) total = w;
    }
    __syncthreads();
    return total;
}

// One block per row. Rows are not 16-byte aligned in general (4095 columns), so loads are
// scalar but coalesced; the first kCache * kThreads values stay in registers, the rest (if
// any) are read a second time from cache.
__global__ void __launch_bounds__(kThreads)
l1norm_rows_kernel(const float* __restrict__ x, float* __restrict__ out, int64_t cols) {
    const float* xr = x + (int64_t)blockIdx.x * cols;
    float* orow = out + (int64_t)blockIdx.x * cols;
    float v[kCache];
    float acc = 0.f;
    #pragma unroll
    for (int k = 0; k < kCache; ++k) {
        const int64_t j = threadIdx.x + (int64_t)k * kThreads;
        v[k] = j < cols ? __ldcs(xr + j) : 0.f;
        acc += fabsf(v[k]);
    }
    for (int64_t j = threadIdx.x + (int64_t)kCache * kThreads; j < cols; j += kThreads)
        acc += fabsf(xr[j]);
    const float total = block_sum_all(acc);
    // x / mean(|x|) == x * (cols / sum|x|)
    const float mean = total / (float)cols;
    const float inv = 1.0f / mean;
    #pragma unroll
    for (int k = 0; k < kCache; ++k) {
        const int64_t j = threadIdx.x + (int64_t)k * kThreads;
        if (j < cols) __stcs(orow + j, v[k] * inv);
    }
    for (int64_t j = threadIdx.x + (int64_t)kCache * kThreads; j < cols; j += kThreads)
        orow[j] = xr[j] * inv;
}

}  // namespace

torch::Tensor l1_normalize_rows(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "expected a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat, "expected a float32 tensor");
    TORCH_CHECK(x.dim() == 2, "expected a (batch, dim) tensor");
    x = x.contiguous();
    auto out = torch::empty_like(x);
    const int64_t rows = x.size(0), cols = x.size(1);
    if (rows == 0 || cols == 0) return out;
    TORCH_CHECK(rows <= 0x7fffffffLL, "too many rows");
    auto stream = c10::cuda::getCurrentCUDAStream();
    l1norm_rows_kernel<<<(unsigned)rows, kThreads, 0, stream>>>(x.data_ptr<float>(),
                                                                  out.data_ptr<float>(), cols);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

CPP_SOURCE = "torch::Tensor l1_normalize_rows(torch::Tensor x);"

l1norm_ext = load_inline(
    name="kb_hw_l1_norm_rows",
    cpp_sources=CPP_SOURCE,
    cuda_sources=CUDA_SOURCE,
    functions=["l1_normalize_rows"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return l1norm_ext.l1_normalize_rows(x)
