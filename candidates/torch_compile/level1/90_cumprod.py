# Generated from problems/level1/90_cumprod.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""Inclusive prefix product along one dimension."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """torch.cumprod along `dim`."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumprod(x, dim=self.dim)


batch_size = 4096
input_shape = (32768,)
dim = 1


def get_inputs():
    # Factors close to 1 keep the running product O(1) over the whole row.
    return [torch.empty(batch_size, *input_shape).uniform_(0.99, 1.01)]


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
