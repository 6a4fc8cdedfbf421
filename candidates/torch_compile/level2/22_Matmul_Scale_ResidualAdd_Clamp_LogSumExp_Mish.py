# Generated from problems/level2/22_Matmul_Scale_ResidualAdd_Clamp_LogSumExp_Mish.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""Linear layer, scaling, residual add, clamp, row logsumexp, then x * mish(x)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Linear -> scale -> x + x -> clamp -> logsumexp over features -> x * mish(x)."""

    def __init__(self, input_size, hidden_size, scale_factor, clamp_min, clamp_max):
        super().__init__()
        self.matmul = nn.Linear(input_size, hidden_size)
        self.scale_factor = scale_factor
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max

    def forward(self, x):
        x = self.matmul(x)
        x = x * self.scale_factor
        x = x + x
        x = torch.clamp(x, self.clamp_min, self.clamp_max)
        x = torch.logsumexp(x, dim=1, keepdim=True)
        x = x * F.mish(x)
        return x


batch_size = 1024
input_size = 8192
hidden_size = 8192
scale_factor = 2.0
clamp_min = -10.0
clamp_max = 10.0


def get_inputs():
    # A per-row offset makes the row logsumexp values differ between rows.
    offset = torch.randn(batch_size, 1)
    return [torch.rand(batch_size, input_size) + offset]


def get_init_inputs():
    return [input_size, hidden_size, scale_factor, clamp_min, clamp_max]


class ModelNew(nn.Module):
    """The problem's own Model under torch.compile: built with the same arguments, so it draws
    the same weights, and compiled at its first call."""

    def __init__(self, *args):
        super().__init__()
        self.compiled = torch.compile(Model(*args))

    def forward(self, *inputs):
        return self.compiled(*inputs)
