# expect: passed|slower
# Reads scaling_factor, hardtanh_min and hardtanh_max from the
# problem file (upstream runs both files in one namespace), never defining them itself.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SOURCE = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void scale_clamp_gelu(const float* x, float* y, float scale, float lo, float hi, long n) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) {
        float v = fminf(fmaxf(x[i] * scale, lo), hi);
        y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678f));
    }
}

torch::Tensor fused_epilogue(torch::Tensor x, double scale, double lo, double hi) {
    auto y = torch::empty_like(x);
    long n = x.numel();
    scale_clamp_gelu<<<(n + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), (float)scale, (float)lo, (float)hi, n);
    return y;
}
"""

fused = load_inline(name="names_scale_clamp_gelu", cpp_sources="torch::Tensor fused_epilogue(torch::Tensor x, double scale, double lo, double hi);",
                    cuda_sources="#include <ATen/cuda/CUDAContext.h>\n" + SOURCE,
                    functions=["fused_epilogue"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scaling_factor, hardtanh_min, hardtanh_max):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)

    def forward(self, x):
        return fused.fused_epilogue(self.gemm(x).contiguous(), scaling_factor, hardtanh_min,
                                    hardtanh_max)
