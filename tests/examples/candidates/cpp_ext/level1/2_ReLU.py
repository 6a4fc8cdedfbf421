import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP_SOURCE = r"""
#include <torch/extension.h>

torch::Tensor relu(torch::Tensor x) {
    auto in = x.contiguous();
    auto out = torch::empty_like(in);
    const float* src = in.data_ptr<float>();
    float* dst = out.data_ptr<float>();
    for (int64_t i = 0; i < in.numel(); ++i) dst[i] = src[i] > 0.0f ? src[i] : 0.0f;
    return out;
}
"""

ext = load_inline(name="kb_test_cpu_relu", cpp_sources=CPP_SOURCE, functions=["relu"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu(x)
