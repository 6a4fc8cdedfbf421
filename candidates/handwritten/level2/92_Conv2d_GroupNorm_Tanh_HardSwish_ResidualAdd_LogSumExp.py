"""Conv2d stays on cuDNN; everything after it is two custom kernels over the conv output: a
group-statistics reduction, then one pass that applies GroupNorm, tanh, HardSwish and the residual
add per element and reduces logsumexp over the channels in registers. Eager runs about ten kernels
with four full-size temporaries; this reads the conv output twice and writes only the (N,1,H,W)
result."""
# expect: passed

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SOURCE = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAException.h>

namespace {

constexpr int kStatThreads = 256;
constexpr int kChunks = 4;         // blocks per (sample, group) in the statistics pass
constexpr int kLseThreads = 128;
constexpr int kCache = 64;         // channels held in registers by the logsumexp pass

__device__ __forceinline__ double warp_sum_d(double v) {
    #pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// Pass 1: partial sum and sum of squares of one chunk of one (sample, group) slab.
// A group's channels are contiguous in NCHW, so the slab is one run of group_elems floats.
template <bool kVec>
__global__ void __launch_bounds__(kStatThreads)
group_stats_kernel(const float* __restrict__ y, int64_t group_elems,
                   double2* __restrict__ partials) {
    const int64_t slab = blockIdx.y;
    const float* base = y + slab * group_elems;
    float s0 = 0.f, q0 = 0.f, s1 = 0.f, q1 = 0.f;
    if (kVec) {
        const int64_t e4 = group_elems >> 2;
        const int64_t per = (e4 + kChunks - 1) / kChunks;
        const int64_t lo = blockIdx.x * per;
        const int64_t hi = min(e4, lo + per);
        const float4* b4 = reinterpret_cast<const float4*>(base);
        int64_t i = lo + threadIdx.x;
        for (; i + kStatThreads < hi; i += 2 * kStatThreads) {
            float4 a = __ldg(b4 + i), b = __ldg(b4 + i + kStatThreads);
            s0 += (a.x + a.y) + (a.z + a.w);
            q0 = fmaf(a.x, a.x, fmaf(a.y, a.y, fmaf(a.z, a.z, fmaf(a.w, a.w, q0))));
            s1 += (b.x + b.y) + (b.z + b.w);
            q1 = fmaf(b.x, b.x, fmaf(b.y, b.y, fmaf(b.z, b.z, fmaf(b.w, b.w, q1))));
        }
        if (i < hi) {
            float4 a = __ldg(b4 + i);
            s0 += (a.x + a.y) + (a.z + a.w);
            q0 = fmaf(a.x, a.x, fmaf(a.y, a.y, fmaf(a.z, a.z, fmaf(a.w, a.w, q0))));
        }
    } else {
        const int64_t per = (group_elems + kChunks - 1) / kChunks;
        const int64_t lo = blockIdx.x * per;
        const int64_t hi = min(group_elems, lo + per);
        for (int64_t i = lo + threadIdx.x; i < hi; i += kStatThreads) {
            const float a = __ldg(base + i);
            s0 += a;
            q0 = fmaf(a, a, q0);
        }
    }
    double s = (double)(s0 + s1), q = (double)(q0 + q1);
    __shared__ double ps[kStatThreads / 32], pq[kStatThreads / 32];
    s = warp_sum_d(s);
    q = warp_sum_d(q);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) {
        ps[warp] = s;
        pq[warp] = q;
    }
    __syncthreads();
    if (warp == 0) {
        double a = lane < kStatThreads / 32 ? ps[lane] : 0.0;
        double b = lane < kStatThreads / 32 ? pq[lane] : 0.0;
        a = warp_sum_d(a);
        b = warp_sum_d(b);
        if (lane == 0) partials[slab * kChunks + blockIdx.x] = make_double2(a, b);
    }
}

__device__ __forceinline__ float fast_tanh(float z) {
    // 1 - 2 / (exp(2z) + 1): saturates cleanly to +-1, absolute error ~1e-7.
    return 1.0f - __fdividef(2.0f, __expf(2.0f * z) + 1.0f);
}

__device__ __forceinline__ float hardswish(float t) {
    return t * fminf(fmaxf(t + 3.0f, 0.0f), 6.0f) * (1.0f / 6.0f);
}

// Prologue shared by both pass-2 kernels: per-channel scale/shift for sample n.
// smem layout: scale[C], shift[C], mean[G], rstd[G].
__device__ __forceinline__ void load_coefficients(float* smem, const double2* __restrict__ partials,
                                                  const float* __restrict__ gamma,
                                                  const float* __restrict__ beta, int n, int C,
                                                  int G, int64_t group_elems, float eps) {
    float* scale = smem;
    float* shift = smem + C;
    float* gmean = smem + 2 * C;
    float* grstd = smem + 2 * C + G;
    for (int g = threadIdx.x; g < G; g += blockDim.x) {
        double s = 0.0, q = 0.0;
        for (int k = 0; k < kChunks; ++k) {
            const double2 p = partials[((int64_t)n * G + g) * kChunks + k];
            s += p.x;
            q += p.y;
        }
        const double m = s / (double)group_elems;
        double var = q / (double)group_elems - m * m;
        if (var < 0.0) var = 0.0;
        gmean[g] = (float)m;
        grstd[g] = (float)(1.0 / sqrt(var + (double)eps));
    }
    __syncthreads();
    const int cpg = C / G;
    for (int c = threadIdx.x; c < C; c += blockDim.x) {
        const int g = c / cpg;
        const float a = gamma[c] * grstd[g];
        scale[c] = a;
        shift[c] = beta[c] - gmean[g] * a;
    }
    __syncthreads();
}

__device__ __forceinline__ float residual_value(float yv, float a, float b) {
    return yv + hardswish(fast_tanh(fmaf(yv, a, b)));
}

// Pass 2 (C <= kCache): one thread per pixel; channel values live in registers.
__global__ void __launch_bounds__(kLseThreads)
norm_act_lse_cached(const float* __restrict__ y, const double2* __restrict__ partials,
                    const float* __restrict__ gamma, const float* __restrict__ beta,
                    float* __restrict__ out, int C, int G, int64_t hw, float eps) {
    extern __shared__ float smem[];
    const int n = blockIdx.y;
    load_coefficients(smem, partials, gamma, beta, n, C, G, (int64_t)(C / G) * hw, eps);
    const int64_t s = (int64_t)blockIdx.x * kLseThreads + threadIdx.x;
    if (s >= hw) return;
    const float* yp = y + (int64_t)n * C * hw + s;
    const float* scale = smem;
    const float* shift = smem + C;
    float r[kCache];
    float m = -INFINITY;
    #pragma unroll
    for (int c = 0; c < kCache; ++c) {
        if (c < C) {
            r[c] = residual_value(__ldcs(yp + (int64_t)c * hw), scale[c], shift[c]);
            m = fmaxf(m, r[c]);
        }
    }
    float sum = 0.f;
    #pragma unroll
    for (int c = 0; c < kCache; ++c)
        if (c < C) sum += __expf(r[c] - m);
    out[(int64_t)n * hw + s] = m + logf(sum);
}

// Pass 2 (any C): online logsumexp, one thread per pixel.
__global__ void __launch_bounds__(kLseThreads)
norm_act_lse_online(const float* __restrict__ y, const double2* __restrict__ partials,
                    const float* __restrict__ gamma, const float* __restrict__ beta,
                    float* __restrict__ out, int C, int G, int64_t hw, float eps) {
    extern __shared__ float smem[];
    const int n = blockIdx.y;
    load_coefficients(smem, partials, gamma, beta, n, C, G, (int64_t)(C / G) * hw, eps);
    const int64_t s = (int64_t)blockIdx.x * kLseThreads + threadIdx.x;
    if (s >= hw) return;
    const float* yp = y + (int64_t)n * C * hw + s;
    float m = -INFINITY, sum = 0.f;
    for (int c = 0; c < C; ++c) {
        const float v = residual_value(yp[(int64_t)c * hw], smem[c], smem[C + c]);
        if (v > m) {
            sum = sum * __expf(m - v) + 1.0f;
            m = v;
        } else {
            sum += __expf(v - m);
        }
    }
    out[(int64_t)n * hw + s] = m + logf(sum);
}

}  // namespace

torch::Tensor groupnorm_tanh_hswish_res_lse(torch::Tensor y, torch::Tensor gamma,
                                            torch::Tensor beta, int64_t groups, double eps) {
    TORCH_CHECK(y.is_cuda(), "expected a CUDA tensor");
    TORCH_CHECK(y.scalar_type() == torch::kFloat, "expected a float32 tensor");
    TORCH_CHECK(y.dim() >= 2, "expected (N, C, ...)");
    y = y.contiguous();
    auto g = gamma.contiguous().to(torch::kFloat);
    auto b = beta.contiguous().to(torch::kFloat);
    const int64_t N = y.size(0), C = y.size(1);
    TORCH_CHECK(groups > 0 && C % groups == 0, "channels must divide into groups");
    TORCH_CHECK(N <= 65535 && C <= (1 << 20), "shape too large");
    std::vector<int64_t> out_shape(y.sizes().begin(), y.sizes().end());
    out_shape[1] = 1;
    auto out = torch::empty(out_shape, y.options());
    if (y.numel() == 0) return out;
    const int64_t hw = y.numel() / (N * C);
    const int64_t group_elems = (C / groups) * hw;
    auto partials = torch::empty({N * groups * kChunks * 2}, y.options().dtype(torch::kDouble));
    auto* pp = reinterpret_cast<double2*>(partials.data_ptr<double>());
    auto stream = c10::cuda::getCurrentCUDAStream();

    TORCH_CHECK(N * groups <= 65535, "too many (sample, group) slabs");
    dim3 sgrid(kChunks, (unsigned)(N * groups));
    const bool vec = group_elems % 4 == 0 &&
                     reinterpret_cast<uintptr_t>(y.data_ptr<float>()) % 16 == 0;
    if (vec) {
        group_stats_kernel<true><<<sgrid, kStatThreads, 0, stream>>>(y.data_ptr<float>(),
                                                                   group_elems, pp);
    } else {
        group_stats_kernel<false><<<sgrid, kStatThreads, 0, stream>>>(y.data_ptr<float>(),
                                                                    group_elems, pp);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();

    dim3 lgrid((unsigned)((hw + kLseThreads - 1) / kLseThreads), (unsigned)N);
    const size_t smem = (size_t)(2 * C + 2 * groups) * sizeof(float);
    if (C <= kCache) {
        norm_act_lse_cached<<<lgrid, kLseThreads, smem, stream>>>(
            y.data_ptr<float>(), pp, g.data_ptr<float>(), b.data_ptr<float>(),
            out.data_ptr<float>(), (int)C, (int)groups, hw, (float)eps);
    } else {
        norm_act_lse_online<<<lgrid, kLseThreads, smem, stream>>>(
            y.data_ptr<float>(), pp, g.data_ptr<float>(), b.data_ptr<float>(),
            out.data_ptr<float>(), (int)C, (int)groups, hw, (float)eps);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

CPP_SOURCE = (
    "torch::Tensor groupnorm_tanh_hswish_res_lse(torch::Tensor y, torch::Tensor gamma, "
    "torch::Tensor beta, int64_t groups, double eps);"
)

fused_ext = load_inline(
    name="kb_hw_gn_tanh_hswish_res_lse",
    cpp_sources=CPP_SOURCE,
    cuda_sources=CUDA_SOURCE,
    functions=["groupnorm_tanh_hswish_res_lse"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(
        self, in_channels: int, out_channels: int, kernel_size: int, groups: int, eps: float = 1e-5
    ):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.group_norm = nn.GroupNorm(groups, out_channels, eps=eps)
        self.tanh = nn.Tanh()
        self.hard_swish = nn.Hardswish()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x_conv = self.conv(x)
        return fused_ext.groupnorm_tanh_hswish_res_lse(
            x_conv,
            self.group_norm.weight,
            self.group_norm.bias,
            self.group_norm.num_groups,
            self.group_norm.eps,
        )
