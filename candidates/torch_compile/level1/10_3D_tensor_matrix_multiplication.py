# Generated from problems/level1/10_3D_tensor_matrix_multiplication.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""Multiplication of a 3D tensor (N, M, K) by a matrix (K, L) over the last dimension."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """3D tensor times matrix, broadcasting the matrix over the leading dimension."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


N = 16
M = 1024
K = 2048
L = 768


def get_inputs():
    A = torch.randn(N, M, K)
    B = torch.randn(K, L)
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
