# Generated from problems/level1/9_Tall_skinny_matrix_multiplication_.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""Outer-product-like matrix multiplication of a tall (M, N) and a wide (N, M) matrix."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Matrix multiplication of a tall-skinny and a short-wide matrix (tiny inner dimension N)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


M = 8192
N = 32


def get_inputs():
    A = torch.randn(M, N)
    B = torch.randn(N, M)
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
