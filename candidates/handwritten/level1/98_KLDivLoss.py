"""Batch-mean KL divergence kl_div(log(p), t) in one read of both inputs: eager runs log, the
kl_div elementwise terms, a sum and a divide (about five kernels and two full temporaries); here
each thread sums t * (log t - log p) over float4 loads and block partials finish in double."""
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

__device__ __forceinline__ float warp_sum(float v) {
    #pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ __forceinline__ double warp_sum_d(double v) {
    #pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// One term of kl_div with a log-space input: xlogy(t, t) - t * log(p); a zero target adds 0.
__device__ __forceinline__ float kl_term(float p, float t) {
    return t > 0.f ? t * (__logf(t) - __logf(p)) : 0.f;
}

__device__ __forceinline__ float kl4(float4 p, float4 t) {
    return (kl_term(p.x, t.x) + kl_term(p.y, t.y)) + (kl_term(p.z, t.z) + kl_term(p.w, t.w));
}

// Stage 1: every block sums the KL terms (a = predictions, b = targets) over a grid-stride
// slice and writes one partial.
__global__ void __launch_bounds__(kThreads)
kl_partial_kernel(const float* __restrict__ a, const float* __restrict__ b, int64_t n,
                   float* __restrict__ partials) {
    const float4* a4 = reinterpret_cast<const float4*>(a);
    const float4* b4 = reinterpret_cast<const float4*>(b);
    const int64_t n4 = n >> 2;
    const int64_t stride = (int64_t)gridDim.x * kThreads;
    const int64_t gid = (int64_t)blockIdx.x * kThreads + threadIdx.x;

    float acc0 = 0.f, acc1 = 0.f, acc2 = 0.f, acc3 = 0.f;
    int64_t i = gid;
    for (; i + 3 * stride < n4; i += 4 * stride) {
        float4 x0 = __ldcs(a4 + i),              y0 = __ldcs(b4 + i);
        float4 x1 = __ldcs(a4 + i + stride),     y1 = __ldcs(b4 + i + stride);
        float4 x2 = __ldcs(a4 + i + 2 * stride), y2 = __ldcs(b4 + i + 2 * stride);
        float4 x3 = __ldcs(a4 + i + 3 * stride), y3 = __ldcs(b4 + i + 3 * stride);
        acc0 += kl4(x0, y0);
        acc1 += kl4(x1, y1);
        acc2 += kl4(x2, y2);
        acc3 += kl4(x3, y3);
    }
    for (; i < n4; i += stride) acc0 += kl4(__ldcs(a4 + i), __ldcs(b4 + i));
    // The n % 4 leftover elements.
    const int64_t t = n4 * 4 + gid;
    if (t < n) {
        acc1 += kl_term(a[t], b[t]);
    }
    float acc = (acc0 + acc1) + (acc2 + acc3);

    __shared__ float warp_part[kThreads / 32];
    acc = warp_sum(acc);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) warp_part[warp] = acc;
    __syncthreads();
    if (warp == 0) {
        float v = lane < kThreads / 32 ? warp_part[lane] : 0.f;
        v = warp_sum(v);
        if (lane == 0) partials[blockIdx.x] = v;
    }
}

// Stage 2: one block adds the partials in double in a fixed order and scales.
__global__ void __launch_bounds__(kThreads)
finish_kernel(const float* __restrict__ partials, int count, double scale,
              float* __restrict__ out) {
    double acc = 0.0;
    for (int i = threadIdx.x; i < count; i += kThreads) acc += (double)partials[i];
    __shared__ double warp_part[kThreads / 32];
    acc = warp_sum_d(acc);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) warp_part[warp] = acc;
    __syncthreads();
    if (warp == 0) {
        double v = lane < kThreads / 32 ? warp_part[lane] : 0.0;
        v = warp_sum_d(v);
        if (lane == 0) out[0] = (float)(v * scale);
    }
}

torch::Tensor aligned_contig(const torch::Tensor& x) {
    auto c = x.contiguous();
    if (reinterpret_cast<uintptr_t>(c.data_ptr<float>()) % 16 != 0) c = c.clone();
    return c;
}

}  // namespace

torch::Tensor kl_div_batchmean(torch::Tensor predictions, torch::Tensor targets) {
    TORCH_CHECK(predictions.is_cuda() && targets.is_cuda(), "expected CUDA tensors");
    TORCH_CHECK(predictions.scalar_type() == torch::kFloat && targets.scalar_type() == torch::kFloat,
                "expected float32 tensors");
    if (predictions.sizes() != targets.sizes()) {
        auto shape = at::infer_size(predictions.sizes(), targets.sizes());
        predictions = predictions.expand(shape);
        targets = targets.expand(shape);
    }
    auto p = aligned_contig(predictions);
    auto t = aligned_contig(targets);
    const int64_t n = p.numel();
    auto out = torch::empty({}, p.options());
    auto stream = c10::cuda::getCurrentCUDAStream();
    int sms = 0;
    C10_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, p.get_device()));
    int64_t blocks = std::min<int64_t>((int64_t)sms * 8, ((n >> 2) + kThreads - 1) / kThreads);
    if (blocks < 1) blocks = 1;
    auto partials = torch::empty({blocks}, p.options());
    kl_partial_kernel<<<(unsigned)blocks, kThreads, 0, stream>>>(
        p.data_ptr<float>(), t.data_ptr<float>(), n, partials.data_ptr<float>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    // 'batchmean': the sum divided by the size of the first dimension.
    const int64_t batch = predictions.dim() > 0 ? predictions.size(0) : 1;
    const double scale = 1.0 / (double)batch;
    finish_kernel<<<1, kThreads, 0, stream>>>(partials.data_ptr<float>(), (int)blocks, scale,
                                              out.data_ptr<float>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

CPP_SOURCE = "torch::Tensor kl_div_batchmean(torch::Tensor predictions, torch::Tensor targets);"

kl_ext = load_inline(
    name="kb_hw_kl_div_loss",
    cpp_sources=CPP_SOURCE,
    cuda_sources=CUDA_SOURCE,
    functions=["kl_div_batchmean"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return kl_ext.kl_div_batchmean(predictions, targets)
