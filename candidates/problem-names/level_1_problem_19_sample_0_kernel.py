# expect: passed|slower
# Builds into BUILD_DIRECTORY with os, both set by upstream's harness
# before a candidate runs; it imports neither.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void relu_kernel(const float* x, float* y, long n) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.0f);
}

torch::Tensor relu_cuda(torch::Tensor x) {
    auto y = torch::empty_like(x);
    long n = x.numel();
    relu_kernel<<<(n + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""

folder = os.path.join(BUILD_DIRECTORY, "relu")
os.makedirs(folder, exist_ok=True)
ext = load_inline(name="names_relu", cpp_sources="torch::Tensor relu_cuda(torch::Tensor x);",
                  cuda_sources=SOURCE, functions=["relu_cuda"], build_directory=folder,
                  verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.relu_cuda(x.contiguous())
