# Generated from problems/level1/13_Matmul_for_symmetric_matrices.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""Matrix multiplication of two symmetric N x N matrices."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Single matrix multiplication whose operands are symmetric."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


N = 4096


def get_inputs():
    A = torch.randn(N, N)
    A = (A + A.T) / 2
    B = torch.randn(N, N)
    B = (B + B.T) / 2
    return [A, B]


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
