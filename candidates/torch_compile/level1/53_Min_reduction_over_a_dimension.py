# Generated from problems/level1/53_Min_reduction_over_a_dimension.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""Min reduction of a 3D tensor over one dimension."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Returns the minimum values along `dim`."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.min(x, dim=self.dim)[0]


batch_size = 16
dim1 = 4096
dim2 = 4095


def get_inputs():
    return [torch.randn(batch_size, dim1, dim2)]


def get_init_inputs():
    return [1]


class ModelNew(nn.Module):
    """The problem's own Model under torch.compile: built with the same arguments, so it draws
    the same weights, and compiled at its first call."""

    def __init__(self, *args):
        super().__init__()
        self.compiled = torch.compile(Model(*args))

    def forward(self, *inputs):
        return self.compiled(*inputs)
