# Generated from problems/level1/30_Softsign.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""Elementwise Softsign activation x / (1 + |x|)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Applies Softsign, written as x / (1 + |x|)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x / (1 + torch.abs(x))


batch_size = 4096
dim = 24576


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
