# Generated from problems/level1/3_Batched_matrix_multiplication.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""Batched matrix multiplication C[b] = A[b] @ B[b]."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Batched matrix multiplication of (batch, m, k) and (batch, k, n) tensors."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.bmm(A, B)


batch_size = 128
m = 512
k = 1024
n = 2048


def get_inputs():
    A = torch.randn(batch_size, m, k)
    B = torch.randn(batch_size, k, n)
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
