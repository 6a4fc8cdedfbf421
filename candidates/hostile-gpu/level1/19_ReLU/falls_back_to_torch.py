"""Fallback: 'builds' a kernel, fails, and silently runs PyTorch instead (torch_only)."""
# expect: passed|slower|torch_only  (what the harness must say; benchmarks/expected_verdicts.py)

import torch
import torch.nn as nn

try:
    from nonexistent_kernel_package import relu_kernel  # the build that never happened
except ImportError:
    relu_kernel = None


class ModelNew(nn.Module):
    def forward(self, x):
        if relu_kernel is not None:
            return relu_kernel(x)
        return torch.relu(x)
