"""RMS normalisation over the channel dimension in one read and one write: eager runs square, mean,
add eps, sqrt and divide (five kernels, about five full passes over memory); here one thread owns
one (sample, pixel) column, keeps its channel values in registers while it sums the squares, and
writes x / rms straight back out with coalesced loads and stores across pixels."""
# expect: passed

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SOURCE = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAException.h>

namespace {

constexpr int kThreads = 128;
constexpr int kCache = 64;  // channels held in registers; more channels are read again

// x is (N, C, inner) contiguous; thread (n, s) normalises x[n, :, s].
__global__ void __launch_bounds__(kThreads)
rmsnorm_channels_kernel(const float* __restrict__ x, float* __restrict__ out, int64_t channels,
                        int64_t inner, float eps) {
    const int64_t s = (int64_t)blockIdx.x * kThreads + threadIdx.x;
    if (s >= inner) return;
    const int64_t base = (int64_t)blockIdx.y * channels * inner + s;
    const float* xp = x + base;
    float* op = out + base;
    float v[kCache];
    float acc0 = 0.f, acc1 = 0.f;
    #pragma unroll
    for (int c = 0; c < kCache; ++c) {
        v[c] = c < channels ? __ldcs(xp + (int64_t)c * inner) : 0.f;
        if (c & 1) acc1 = fmaf(v[c], v[c], acc1);
        else       acc0 = fmaf(v[c], v[c], acc0);
    }
    for (int64_t c = kCache; c < channels; ++c) {
        const float e = xp[c * inner];
        acc0 = fmaf(e, e, acc0);
    }
    const float mean_sq = (acc0 + acc1) / (float)channels;
    const float inv = 1.0f / sqrtf(mean_sq + eps);
    #pragma unroll
    for (int c = 0; c < kCache; ++c)
        if (c < channels) __stcs(op + (int64_t)c * inner, v[c] * inv);
    for (int64_t c = kCache; c < channels; ++c) op[c * inner] = xp[c * inner] * inv;
}

}  // namespace

torch::Tensor rms_norm_channels(torch::Tensor x, double eps) {
    TORCH_CHECK(x.is_cuda(), "expected a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat, "expected a float32 tensor");
    TORCH_CHECK(x.dim() >= 2, "expected at least (N, C)");
    x = x.contiguous();
    auto out = torch::empty_like(x);
    const int64_t batch = x.size(0), channels = x.size(1);
    if (x.numel() == 0) return out;
    const int64_t inner = x.numel() / (batch * channels);
    TORCH_CHECK(batch <= 65535, "batch too large for the grid");
    auto stream = c10::cuda::getCurrentCUDAStream();
    dim3 grid((unsigned)((inner + kThreads - 1) / kThreads), (unsigned)batch);
    rmsnorm_channels_kernel<<<grid, kThreads, 0, stream>>>(x.data_ptr<float>(),
                                                           out.data_ptr<float>(), channels, inner,
                                                           (float)eps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

CPP_SOURCE = "torch::Tensor rms_norm_channels(torch::Tensor x, double eps);"

rmsnorm_ext = load_inline(
    name="kb_hw_rms_norm_channels",
    cpp_sources=CPP_SOURCE,
    cuda_sources=CUDA_SOURCE,
    functions=["rms_norm_channels"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, num_features: int, eps: float = 1e-5):
        super().__init__()
        self.num_features = num_features
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return rmsnorm_ext.rms_norm_channels(x, self.eps)
