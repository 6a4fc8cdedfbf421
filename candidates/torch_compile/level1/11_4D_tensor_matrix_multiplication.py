# Generated from problems/level1/11_4D_tensor_matrix_multiplication.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""4D tensor-matrix multiplication C[b, i, j, k] = sum_l A[b, i, j, l] * B[l, k]."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Contraction of the last dimension of a 4D tensor with a matrix via einsum."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.einsum("bijl,lk->bijk", A, B)


b = 2
i = 256
j = 256
l = 256
k = 768


def get_inputs():
    A = torch.randn(b, i, j, l)
    B = torch.randn(l, k)
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
