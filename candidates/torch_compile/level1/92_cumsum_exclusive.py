# Generated from problems/level1/92_cumsum_exclusive.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""Exclusive prefix sum along one dimension."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Shift right by one with a leading zero (torch.zeros_like + cat), then cumsum."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.size(self.dim)
        zero = torch.zeros_like(x.narrow(self.dim, 0, 1))
        shifted = torch.cat((zero, x.narrow(self.dim, 0, n - 1)), dim=self.dim)
        return torch.cumsum(shifted, dim=self.dim)


batch_size = 4096
input_shape = (32768,)
dim = 1


def get_inputs():
    return [torch.rand(batch_size, *input_shape)]


def get_init_inputs():
    return [dim]


class ModelNew(nn.Module):
    """The problem's own Model under torch.compile: built with the same arguments, so it draws
    the same weights, and compiled at its first call."""

    def __init__(self, *args):
        super().__init__()
        self.compiled = torch.compile(Model(*args))

    def forward(self, *inputs):
        return self.compiled(*inputs)
