# Generated from problems/level1/8_Matmul_with_irregular_shapes_.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""Matrix multiplication with dimensions that are not multiples of common tile sizes."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Single matrix multiplication of an (M, K) and a (K, N) matrix with irregular sizes."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


M = 8205
K = 2949
N = 5921


def get_inputs():
    A = torch.randn(M, K)
    B = torch.randn(K, N)
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
