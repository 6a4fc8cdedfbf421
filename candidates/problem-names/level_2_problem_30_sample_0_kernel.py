# expect: passed|slower
# Calls its kernel with the problem file's hardtanh_min and
# hardtanh_max, which it never defines.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void clamp_kernel(const float* x, float* y, float lo, float hi, long n) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = fminf(fmaxf(x[i], lo), hi);
}

torch::Tensor hardtanh_cuda(torch::Tensor x, double lo, double hi) {
    auto y = torch::empty_like(x);
    long n = x.numel();
    clamp_kernel<<<(n + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), (float)lo, (float)hi, n);
    return y;
}
"""

ext = load_inline(name="names_hardtanh", cpp_sources="torch::Tensor hardtanh_cuda(torch::Tensor x, double lo, double hi);",
                  cuda_sources=SOURCE, functions=["hardtanh_cuda"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, num_groups, hardtanh_min, hardtanh_max):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.group_norm = nn.GroupNorm(num_groups, out_features)

    def forward(self, x):
        x = self.group_norm(self.gemm(x))
        return ext.hardtanh_cuda(x.contiguous(), hardtanh_min, hardtanh_max)
