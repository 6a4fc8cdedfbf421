# Generated from problems/level2/80_Gemm_Max_Subtract_GELU.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""Linear layer, max over one dimension, subtract the mean over features, then GELU."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Gemm -> max over max_dim (keepdim) -> subtract the mean over dim 1 -> GELU."""

    def __init__(self, in_features: int, out_features: int, max_dim: int):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.max_dim = max_dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.gemm(x)
        x = torch.max(x, dim=self.max_dim, keepdim=True).values
        x = x - x.mean(dim=1, keepdim=True)
        return torch.nn.functional.gelu(x)


batch_size = 1024
in_features = 8192
out_features = 8192
max_dim = 0


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, max_dim]


class ModelNew(nn.Module):
    """The problem's own Model under torch.compile: built with the same arguments, so it draws
    the same weights, and compiled at its first call."""

    def __init__(self, *args):
        super().__init__()
        self.compiled = torch.compile(Model(*args))

    def forward(self, *inputs):
        return self.compiled(*inputs)
