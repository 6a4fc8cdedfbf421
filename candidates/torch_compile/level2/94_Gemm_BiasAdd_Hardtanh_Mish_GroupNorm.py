# Generated from problems/level2/94_Gemm_BiasAdd_Hardtanh_Mish_GroupNorm.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""Linear layer, add a learned bias, Hardtanh, Mish, then group normalization."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Gemm -> add bias parameter -> Hardtanh -> Mish -> GroupNorm."""

    def __init__(self, in_features: int, out_features: int, bias_shape, num_groups: int):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.hardtanh = nn.Hardtanh()
        self.mish = nn.Mish()
        self.groupnorm = nn.GroupNorm(num_groups=num_groups, num_channels=out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.gemm(x)
        x = x + self.bias
        x = self.hardtanh(x)
        x = self.mish(x)
        return self.groupnorm(x)


batch_size = 1024
in_features = 8192
out_features = 8192
bias_shape = (out_features,)
num_groups = 256


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, bias_shape, num_groups]


class ModelNew(nn.Module):
    """The problem's own Model under torch.compile: built with the same arguments, so it draws
    the same weights, and compiled at its first call."""

    def __init__(self, *args):
        super().__init__()
        self.compiled = torch.compile(Model(*args))

    def forward(self, *inputs):
        return self.compiled(*inputs)
