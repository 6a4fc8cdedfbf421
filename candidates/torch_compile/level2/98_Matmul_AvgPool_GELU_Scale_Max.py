# Generated from problems/level2/98_Matmul_AvgPool_GELU_Scale_Max.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""Linear layer, 1D average pooling over features, GELU, scale, then max over features."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Matmul -> AvgPool1d over features -> GELU -> multiply by a scalar -> max over features."""

    def __init__(
        self, in_features: int, out_features: int, pool_kernel_size: int, scale_factor: float
    ):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.avg_pool = nn.AvgPool1d(kernel_size=pool_kernel_size)
        self.scale_factor = scale_factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.matmul(x)
        x = self.avg_pool(x.unsqueeze(1)).squeeze(1)
        x = torch.nn.functional.gelu(x)
        x = x * self.scale_factor
        return torch.max(x, dim=1).values


batch_size = 1024
in_features = 8192
out_features = 8192
pool_kernel_size = 16
scale_factor = 2.0


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, pool_kernel_size, scale_factor]


class ModelNew(nn.Module):
    """The problem's own Model under torch.compile: built with the same arguments, so it draws
    the same weights, and compiled at its first call."""

    def __init__(self, *args):
        super().__init__()
        self.compiled = torch.compile(Model(*args))

    def forward(self, *inputs):
        return self.compiled(*inputs)
