# Generated from problems/level2/99_Matmul_GELU_Softmax.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""Linear layer, GELU, then softmax over features."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Matmul -> GELU -> softmax(dim=1)."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.linear(x)
        x = torch.nn.functional.gelu(x)
        return torch.nn.functional.softmax(x, dim=1)


batch_size = 1024
in_features = 8192
out_features = 8192


def get_inputs():
    # Scaled so the softmax is peaked rather than ~1/out_features everywhere.
    return [torch.randn(batch_size, in_features) * 5]


def get_init_inputs():
    return [in_features, out_features]


class ModelNew(nn.Module):
    """The problem's own Model under torch.compile: built with the same arguments, so it draws
    the same weights, and compiled at its first call."""

    def __init__(self, *args):
        super().__init__()
        self.compiled = torch.compile(Model(*args))

    def forward(self, *inputs):
        return self.compiled(*inputs)
