"""Fault: a CUDA kernel that writes far outside its buffer (illegal memory access)."""
# expect: cuda_error  (what the harness must say; benchmarks/expected_verdicts.py)

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SOURCE = r"""
#include <torch/extension.h>

__global__ void bad_relu(const float* x, float* out, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) out[i + (int64_t)1 << 40] = x[i] > 0.f ? x[i] : 0.f;
}

torch::Tensor relu(torch::Tensor x) {
    auto out = torch::empty_like(x);
    int64_t n = x.numel();
    bad_relu<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), out.data_ptr<float>(), n);
    return out;
}
"""

ext = load_inline(name="kb_hostile_illegal_address", cpp_sources="torch::Tensor relu(torch::Tensor x);",
                  cuda_sources=CUDA_SOURCE, functions=["relu"],
                  extra_cuda_cflags=["-gencode=arch=compute_90,code=sm_90"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu(x)
