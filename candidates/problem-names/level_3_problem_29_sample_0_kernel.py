# expect: passed|slower
# Builds on the problem file's own Model and to_2tuple helper (upstream
# runs both files in one namespace) and replaces the head's bias add with its own kernel.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void add_bias(float* y, const float* b, long rows, long cols) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < rows * cols) y[i] += b[i % cols];
}

torch::Tensor bias_add_cuda(torch::Tensor y, torch::Tensor b) {
    long rows = y.size(0), cols = y.size(1);
    add_bias<<<(rows * cols + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        y.data_ptr<float>(), b.data_ptr<float>(), rows, cols);
    return y;
}
"""

ext = load_inline(name="names_bias_add", cpp_sources="torch::Tensor bias_add_cuda(torch::Tensor y, torch::Tensor b);",
                  cuda_sources=SOURCE, functions=["bias_add_cuda"], verbose=False)


class ModelNew(Model):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.patch_hw = to_2tuple(self.patch_embed.patch_size[0])

    def forward(self, x):
        features = self.forward_features(x)
        return ext.bias_add_cuda(torch.matmul(features, self.head.weight.t()).contiguous(),
                                 self.head.bias)
