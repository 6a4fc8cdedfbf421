"""Conv3d stays on cuDNN; HardSwish, GroupNorm and the spatial mean become one reduction over the
conv output. The mean of a GroupNorm output per (sample, channel) only needs each channel's sum and
each group's sum of squares of hardswish(y), so a single read of the conv output replaces eager's
hardswish, group-norm statistics, normalise and mean kernels (about four full passes and two
temporaries); a tiny second kernel combines the per-channel sums in double."""
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

__device__ __forceinline__ double warp_sum_d(double v) {
    #pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ __forceinline__ float hardswish(float x) {
    return x * fminf(fmaxf(x + 3.0f, 0.0f), 6.0f) * (1.0f / 6.0f);
}

// One block per (sample, channel): sum and sum of squares of hardswish(y) over the volume.
// Channels are spatial runs of `spatial` floats; odd lengths rule out aligned float4, so the
// loads are scalar, coalesced and unrolled four deep.
__global__ void __launch_bounds__(kThreads)
hswish_channel_stats(const float* __restrict__ y, int64_t spatial, double2* __restrict__ stats) {
    const float* base = y + (int64_t)blockIdx.x * spatial;
    float s0 = 0.f, s1 = 0.f, q0 = 0.f, q1 = 0.f;
    int64_t i = threadIdx.x;
    for (; i + 3 * kThreads < spatial; i += 4 * kThreads) {
        const float a = hardswish(__ldcs(base + i));
        const float b = hardswish(__ldcs(base + i + kThreads));
        const float c = hardswish(__ldcs(base + i + 2 * kThreads));
        const float d = hardswish(__ldcs(base + i + 3 * kThreads));
        s0 += a + c;
        s1 += b + d;
        q0 = fmaf(a, a, fmaf(c, c, q0));
        q1 = fmaf(b, b, fmaf(d, d, q1));
    }
    for (; i < spatial; i += kThreads) {
        const float a = hardswish(__ldcs(base + i));
        s0 += a;
        q0 = fmaf(a, a, q0);
    }
    double s = (double)(s0 + s1), q = (double)(q0 + q1);
    __shared__ double ps[kThreads / 32], pq[kThreads / 32];
    s = warp_sum_d(s);
    q = warp_sum_d(q);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) {
        ps[warp] = s;
        pq[warp] = q;
    }
    __syncthreads();
    if (warp == 0) {
        double a = lane < kThreads / 32 ? ps[lane] : 0.0;
        double b = lane < kThreads / 32 ? pq[lane] : 0.0;
        a = warp_sum_d(a);
        b = warp_sum_d(b);
        if (lane == 0) stats[blockIdx.x] = make_double2(a, b);
    }
}

// One thread per (sample, channel):
// mean_spatial(GN(h))[c] = gamma[c] * (mean_c - mean_g) * rstd_g + beta[c].
__global__ void groupnorm_mean_finish(const double2* __restrict__ stats,
                                      const float* __restrict__ gamma,
                                      const float* __restrict__ beta, float* __restrict__ out,
                                      int64_t N, int C, int G, int64_t spatial, float eps) {
    const int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= N * C) return;
    const int64_t n = idx / C;
    const int c = (int)(idx - n * C);
    const int cpg = C / G;
    const int g = c / cpg;
    double s = 0.0, q = 0.0;
    for (int k = 0; k < cpg; ++k) {
        const double2 v = stats[n * C + (int64_t)g * cpg + k];
        s += v.x;
        q += v.y;
    }
    const double count = (double)cpg * (double)spatial;
    const double mg = s / count;
    double var = q / count - mg * mg;
    if (var < 0.0) var = 0.0;
    const double rstd = 1.0 / sqrt(var + (double)eps);
    const double mc = stats[idx].x / (double)spatial;
    out[idx] = (float)((double)gamma[c] * (mc - mg) * rstd + (double)beta[c]);
}

}  // namespace

torch::Tensor hswish_groupnorm_spatial_mean(torch::Tensor y, torch::Tensor gamma,
                                            torch::Tensor beta, int64_t groups, double eps) {
    TORCH_CHECK(y.is_cuda(), "expected a CUDA tensor");
    TORCH_CHECK(y.scalar_type() == torch::kFloat, "expected a float32 tensor");
    TORCH_CHECK(y.dim() >= 2, "expected (N, C, ...)");
    y = y.contiguous();
    auto g = gamma.contiguous().to(torch::kFloat);
    auto b = beta.contiguous().to(torch::kFloat);
    const int64_t N = y.size(0), C = y.size(1);
    TORCH_CHECK(groups > 0 && C % groups == 0, "channels must divide into groups");
    auto out = torch::empty({N, C}, y.options());
    if (out.numel() == 0) return out;
    const int64_t spatial = y.numel() / (N * C);
    TORCH_CHECK(N * C <= 0x7fffffffLL, "too many channels");
    auto stats = torch::empty({N * C * 2}, y.options().dtype(torch::kDouble));
    auto* sp = reinterpret_cast<double2*>(stats.data_ptr<double>());
    auto stream = c10::cuda::getCurrentCUDAStream();
    hswish_channel_stats<<<(unsigned)(N * C), kThreads, 0, stream>>>(y.data_ptr<float>(), spatial,
                                                                     sp);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    const int fin_threads = 256;
    groupnorm_mean_finish<<<(unsigned)((N * C + fin_threads - 1) / fin_threads), fin_threads, 0,
                            stream>>>(sp, g.data_ptr<float>(), b.data_ptr<float>(),
                                      out.data_ptr<float>(), N, (int)C, (int)groups, spatial,
                                      (float)eps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

CPP_SOURCE = (
    "torch::Tensor hswish_groupnorm_spatial_mean(torch::Tensor y, torch::Tensor gamma, "
    "torch::Tensor beta, int64_t groups, double eps);"
)

fused_ext = load_inline(
    name="kb_hw_hswish_groupnorm_mean",
    cpp_sources=CPP_SOURCE,
    cuda_sources=CUDA_SOURCE,
    functions=["hswish_groupnorm_spatial_mean"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, num_groups=4, bias=True):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, bias=bias)
        self.group_norm = nn.GroupNorm(num_groups, out_channels)

    def forward(self, x):
        x = self.conv(x)
        return fused_ext.hswish_groupnorm_spatial_mean(
            x,
            self.group_norm.weight,
            self.group_norm.bias,
            self.group_norm.num_groups,
            self.group_norm.eps,
        )
