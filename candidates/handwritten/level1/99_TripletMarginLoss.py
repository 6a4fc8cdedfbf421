"""Triplet margin loss in one read of anchor, positive and negative: eager forms both differences,
two norms, the hinge and the mean (seven or so kernels with full-size temporaries); here one block
per row accumulates both squared distances from float4 loads, applies the hinge, and a small second
kernel averages the per-row losses in double."""
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
// torch.pairwise_distance adds this to the difference before taking the norm.
constexpr float kEps = 1e-6f;

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

__device__ __forceinline__ void accum(float a, float p, float n, float& sp, float& sn) {
    float dp = a - p + kEps;
    float dn = a - n + kEps;
    sp = fmaf(dp, dp, sp);
    sn = fmaf(dn, dn, sn);
}

__device__ __forceinline__ void accum4(float4 a, float4 p, float4 n, float& sp, float& sn) {
    accum(a.x, p.x, n.x, sp, sn);
    accum(a.y, p.y, n.y, sp, sn);
    accum(a.z, p.z, n.z, sp, sn);
    accum(a.w, p.w, n.w, sp, sn);
}

// One block per row: both squared distances, then the hinge for that row.
template <bool kVec>
__global__ void __launch_bounds__(kThreads)
triplet_rows_kernel(const float* __restrict__ anc, const float* __restrict__ pos,
                    const float* __restrict__ neg, int64_t cols, float margin,
                    float* __restrict__ row_loss) {
    const int64_t base = (int64_t)blockIdx.x * cols;
    float sp0 = 0.f, sn0 = 0.f, sp1 = 0.f, sn1 = 0.f;
    if (kVec) {
        const float4* a4 = reinterpret_cast<const float4*>(anc + base);
        const float4* p4 = reinterpret_cast<const float4*>(pos + base);
        const float4* n4 = reinterpret_cast<const float4*>(neg + base);
        const int64_t c4 = cols >> 2;
        int64_t j = threadIdx.x;
        for (; j + kThreads < c4; j += 2 * kThreads) {
            float4 a0 = __ldcs(a4 + j), p0 = __ldcs(p4 + j), q0 = __ldcs(n4 + j);
            float4 a1 = __ldcs(a4 + j + kThreads), p1 = __ldcs(p4 + j + kThreads),
                   q1 = __ldcs(n4 + j + kThreads);
            accum4(a0, p0, q0, sp0, sn0);
            accum4(a1, p1, q1, sp1, sn1);
        }
        if (j < c4) accum4(__ldcs(a4 + j), __ldcs(p4 + j), __ldcs(n4 + j), sp0, sn0);
    } else {
        for (int64_t j = threadIdx.x; j < cols; j += kThreads)
            accum(anc[base + j], pos[base + j], neg[base + j], sp0, sn0);
    }
    float sp = sp0 + sp1, sn = sn0 + sn1;

    __shared__ float part_p[kThreads / 32], part_n[kThreads / 32];
    sp = warp_sum(sp);
    sn = warp_sum(sn);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) {
        part_p[warp] = sp;
        part_n[warp] = sn;
    }
    __syncthreads();
    if (warp == 0) {
        float vp = lane < kThreads / 32 ? part_p[lane] : 0.f;
        float vn = lane < kThreads / 32 ? part_n[lane] : 0.f;
        vp = warp_sum(vp);
        vn = warp_sum(vn);
        if (lane == 0) row_loss[blockIdx.x] = fmaxf(margin + sqrtf(vp) - sqrtf(vn), 0.f);
    }
}

__global__ void __launch_bounds__(kThreads)
mean_kernel(const float* __restrict__ vals, int64_t count, float* __restrict__ out) {
    double acc = 0.0;
    for (int64_t i = threadIdx.x; i < count; i += kThreads) acc += (double)vals[i];
    __shared__ double warp_part[kThreads / 32];
    acc = warp_sum_d(acc);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) warp_part[warp] = acc;
    __syncthreads();
    if (warp == 0) {
        double v = lane < kThreads / 32 ? warp_part[lane] : 0.0;
        v = warp_sum_d(v);
        if (lane == 0) out[0] = (float)(v / (double)count);
    }
}

bool aligned16(const torch::Tensor& x) {
    return reinterpret_cast<uintptr_t>(x.data_ptr<float>()) % 16 == 0;
}

}  // namespace

torch::Tensor triplet_margin_loss(torch::Tensor anchor, torch::Tensor positive,
                                  torch::Tensor negative, double margin) {
    TORCH_CHECK(anchor.is_cuda() && positive.is_cuda() && negative.is_cuda(),
                "expected CUDA tensors");
    TORCH_CHECK(anchor.scalar_type() == torch::kFloat && positive.scalar_type() == torch::kFloat &&
                negative.scalar_type() == torch::kFloat, "expected float32 tensors");
    TORCH_CHECK(anchor.dim() == 2 && anchor.sizes() == positive.sizes() &&
                anchor.sizes() == negative.sizes(), "expected three (batch, dim) tensors");
    auto a = anchor.contiguous();
    auto p = positive.contiguous();
    auto n = negative.contiguous();
    const int64_t rows = a.size(0), cols = a.size(1);
    auto out = torch::empty({}, a.options());
    if (rows == 0) return out.fill_(std::numeric_limits<float>::quiet_NaN());
    auto row_loss = torch::empty({rows}, a.options());
    auto stream = c10::cuda::getCurrentCUDAStream();
    const bool vec = cols % 4 == 0 && aligned16(a) && aligned16(p) && aligned16(n);
    TORCH_CHECK(rows <= 0x7fffffffLL, "too many rows");
    if (vec) {
        triplet_rows_kernel<true><<<(unsigned)rows, kThreads, 0, stream>>>(
            a.data_ptr<float>(), p.data_ptr<float>(), n.data_ptr<float>(), cols, (float)margin,
            row_loss.data_ptr<float>());
    } else {
        triplet_rows_kernel<false><<<(unsigned)rows, kThreads, 0, stream>>>(
            a.data_ptr<float>(), p.data_ptr<float>(), n.data_ptr<float>(), cols, (float)margin,
            row_loss.data_ptr<float>());
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    mean_kernel<<<1, kThreads, 0, stream>>>(row_loss.data_ptr<float>(), rows,
                                             out.data_ptr<float>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

CPP_SOURCE = (
    "torch::Tensor triplet_margin_loss(torch::Tensor anchor, torch::Tensor positive, "
    "torch::Tensor negative, double margin);"
)

triplet_ext = load_inline(
    name="kb_hw_triplet_margin_loss",
    cpp_sources=CPP_SOURCE,
    cuda_sources=CUDA_SOURCE,
    functions=["triplet_margin_loss"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, margin: float = 1.0):
        super().__init__()
        self.margin = float(margin)

    def forward(self, anchor: torch.Tensor, positive: torch.Tensor, negative: torch.Tensor) -> torch.Tensor:
        return triplet_ext.triplet_margin_loss(anchor, positive, negative, self.margin)
