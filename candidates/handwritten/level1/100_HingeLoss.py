"""Hinge loss mean(clamp(1 - p * t, 0)) in one read of the predictions: eager runs multiply,
reverse-subtract, clamp and mean (four kernels, three full temporaries); here each block walks whole
rows with float4 loads, the broadcast targets come from cache, and partial sums finish in double."""
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

__device__ __forceinline__ float hinge(float p, float t) { return fmaxf(1.0f - p * t, 0.0f); }

__device__ __forceinline__ float hinge4(float4 p, float4 t) {
    return (hinge(p.x, t.x) + hinge(p.y, t.y)) + (hinge(p.z, t.z) + hinge(p.w, t.w));
}

__device__ __forceinline__ void block_partial(float acc, float* __restrict__ partials) {
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

// predictions viewed as (rows, cols); targets has cols entries, shared by every row.
// Vector path: cols % 4 == 0 and both pointers 16-byte aligned.
__global__ void __launch_bounds__(kThreads)
hinge_rows_vec4(const float* __restrict__ pred, const float* __restrict__ targ, int64_t rows,
                int64_t cols, float* __restrict__ partials) {
    const int64_t c4 = cols >> 2;
    const float4* t4 = reinterpret_cast<const float4*>(targ);
    float acc0 = 0.f, acc1 = 0.f;
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const float4* p4 = reinterpret_cast<const float4*>(pred + r * cols);
        int64_t j = threadIdx.x;
        for (; j + kThreads < c4; j += 2 * kThreads) {
            float4 pa = __ldcs(p4 + j), pb = __ldcs(p4 + j + kThreads);
            float4 ta = __ldg(t4 + j), tb = __ldg(t4 + j + kThreads);
            acc0 += hinge4(pa, ta);
            acc1 += hinge4(pb, tb);
        }
        if (j < c4) acc0 += hinge4(__ldcs(p4 + j), __ldg(t4 + j));
    }
    block_partial(acc0 + acc1, partials);
}

__global__ void __launch_bounds__(kThreads)
hinge_rows_scalar(const float* __restrict__ pred, const float* __restrict__ targ, int64_t rows,
                  int64_t cols, float* __restrict__ partials) {
    float acc = 0.f;
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const float* pr = pred + r * cols;
        for (int64_t j = threadIdx.x; j < cols; j += kThreads) acc += hinge(pr[j], __ldg(targ + j));
    }
    block_partial(acc, partials);
}

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

}  // namespace

torch::Tensor hinge_loss(torch::Tensor predictions, torch::Tensor targets) {
    TORCH_CHECK(predictions.is_cuda() && targets.is_cuda(), "expected CUDA tensors");
    TORCH_CHECK(predictions.scalar_type() == torch::kFloat && targets.scalar_type() == torch::kFloat,
                "expected float32 tensors");
    if (!(targets.dim() == 1 && predictions.dim() >= 1 && predictions.numel() > 0 &&
          targets.size(0) == predictions.size(-1))) {
        // Shapes other than a target vector broadcast along the last dimension: plain ATen.
        return torch::clamp_min(1 - predictions * targets, 0).mean();
    }
    // The problem's case: predictions viewed as (rows, cols), targets shared by every row.
    auto p = predictions.contiguous();
    auto t = targets.contiguous();
    const int64_t cols = t.numel();
    const int64_t n = p.numel();
    auto out = torch::empty({}, p.options());
    auto stream = c10::cuda::getCurrentCUDAStream();
    int sms = 0;
    C10_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, p.get_device()));
    const double scale = 1.0 / (double)n;

    const int64_t rows = n / cols;
    int64_t blocks = std::min<int64_t>((int64_t)sms * 8, std::max<int64_t>(rows, 1));
    auto partials = torch::empty({blocks}, p.options());
    const bool vec = (cols % 4 == 0) &&
                     reinterpret_cast<uintptr_t>(p.data_ptr<float>()) % 16 == 0 &&
                     reinterpret_cast<uintptr_t>(t.data_ptr<float>()) % 16 == 0;
    if (vec) {
        hinge_rows_vec4<<<(unsigned)blocks, kThreads, 0, stream>>>(
            p.data_ptr<float>(), t.data_ptr<float>(), rows, cols, partials.data_ptr<float>());
    } else {
        hinge_rows_scalar<<<(unsigned)blocks, kThreads, 0, stream>>>(
            p.data_ptr<float>(), t.data_ptr<float>(), rows, cols, partials.data_ptr<float>());
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    finish_kernel<<<1, kThreads, 0, stream>>>(partials.data_ptr<float>(), (int)blocks, scale,
                                              out.data_ptr<float>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

CPP_SOURCE = "torch::Tensor hinge_loss(torch::Tensor predictions, torch::Tensor targets);"

hinge_ext = load_inline(
    name="kb_hw_hinge_loss",
    cpp_sources=CPP_SOURCE,
    cuda_sources=CUDA_SOURCE,
    functions=["hinge_loss"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return hinge_ext.hinge_loss(predictions, targets)
