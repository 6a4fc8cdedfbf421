import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# A C++ kernel that does not compile, and the quiet fallback that generated code often has.
CPP_SOURCE = r"""
#include <torch/extension.h>
torch::Tensor relu(torch::Tensor x) { return x.clamp_min(0) }
"""

try:
    ext = load_inline(name="kb_test_cpu_fallback", cpp_sources=CPP_SOURCE, functions=["relu"])
except Exception:
    ext = None


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu(x) if ext is not None else torch.relu(x)
