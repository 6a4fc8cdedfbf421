# Generated from problems/level1/4_Matrix_vector_multiplication_.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""Matrix-vector multiplication of an (M, K) matrix with a (K, 1) column vector."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Matrix-vector product A @ B with B a single column."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


M = 2048
K = 65536


def get_inputs():
    A = torch.randn(M, K)
    B = torch.randn(K, 1)
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
