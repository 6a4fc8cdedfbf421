# Generated from problems/level2/75_Gemm_GroupNorm_Min_BiasAdd.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""Linear layer, group normalization, minimum over features, then a broadcast bias add."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Gemm -> GroupNorm -> min over features (keepdim) -> add a (1, C, 1, 1) bias (gives 4D)."""

    def __init__(self, in_features: int, out_features: int, num_groups: int, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.group_norm = nn.GroupNorm(num_groups, out_features)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.gemm(x)
        x = self.group_norm(x)
        x = torch.min(x, dim=1, keepdim=True)[0]
        return x + self.bias


batch_size = 1024
in_features = 8192
out_features = 8192
num_groups = 512
bias_shape = (1, out_features, 1, 1)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, num_groups, bias_shape]


class ModelNew(nn.Module):
    """The problem's own Model under torch.compile: built with the same arguments, so it draws
    the same weights, and compiled at its first call."""

    def __init__(self, *args):
        super().__init__()
        self.compiled = torch.compile(Model(*args))

    def forward(self, *inputs):
        return self.compiled(*inputs)
