# Generated from problems/level1/18_Matmul_with_transposed_both.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""Matrix multiplication C = A.T @ B.T with A stored as (K, M) and B as (N, K)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Matrix multiplication with both operands transposed."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A.T, B.T)


M = 2048
K = 8192
N = 4096


def get_inputs():
    A = torch.randn(K, M)
    B = torch.randn(N, K)
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
