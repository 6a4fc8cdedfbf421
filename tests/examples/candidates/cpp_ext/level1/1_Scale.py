import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP_SOURCE = r"""
#include <torch/extension.h>

torch::Tensor scale(torch::Tensor x, double factor) {
    return x * factor  // missing semicolon: the build must fail with a short message
}
"""

ext = load_inline(name="kb_test_broken_scale", cpp_sources=CPP_SOURCE, functions=["scale"])


class ModelNew(nn.Module):
    def __init__(self, factor):
        super().__init__()
        self.factor = factor

    def forward(self, x):
        return ext.scale(x, self.factor)
