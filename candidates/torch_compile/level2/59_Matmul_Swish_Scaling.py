# Generated from problems/level2/59_Matmul_Swish_Scaling.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""Linear layer, Swish (x * sigmoid(x)), then scale."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Matmul -> Swish -> multiply by a scalar."""

    def __init__(self, in_features: int, out_features: int, scaling_factor: float):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.scaling_factor = scaling_factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.matmul(x)
        x = x * torch.sigmoid(x)
        return x * self.scaling_factor


batch_size = 128
in_features = 32768
out_features = 16384
scaling_factor = 2.0


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, scaling_factor]


class ModelNew(nn.Module):
    """The problem's own Model under torch.compile: built with the same arguments, so it draws
    the same weights, and compiled at its first call."""

    def __init__(self, *args):
        super().__init__()
        self.compiled = torch.compile(Model(*args))

    def forward(self, *inputs):
        return self.compiled(*inputs)
