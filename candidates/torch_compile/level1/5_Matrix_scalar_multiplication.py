# Generated from problems/level1/5_Matrix_scalar_multiplication.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""Multiplication of an (M, N) matrix by a Python scalar."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Scales every element of A by the scalar s."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, s: float) -> torch.Tensor:
        return A * s


M = 8192
N = 16384


def get_inputs():
    A = torch.randn(M, N)
    s = 3.14
    return [A, s]


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
