import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SOURCE = r"""
__global__ void relu(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0 ? x[i] : 0;
}
"""


class ModelNew(nn.Module):
    def forward(self, x):
        ext = load_inline(name="kb_test_relu", cpp_sources="", cuda_sources=CUDA_SOURCE)
        return ext
