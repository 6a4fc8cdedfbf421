# Generated from problems/level1/38_L1Norm_.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""Row-wise L1-style normalization by the mean absolute value."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Divides each row of x by the mean of |x| along dim 1."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x / torch.mean(torch.abs(x), dim=1, keepdim=True)


batch_size = 32768
dim = 4095


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []


class ModelNew(nn.Module):
    """The problem's own Model under torch.compile: built with the same arguments, so it draws
    the same weights, and compiled at its first call."""

    def __init__(self, *args):
        super().__init__()
        self.compiled = torch.compile(Model(*args))

    def forward(self, *inputs):
        return self.compiled(*inputs)
