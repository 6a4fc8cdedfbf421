# Calibration candidate generated from problems/level1/11_4D_tensor_matrix_multiplication.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""4D tensor-matrix multiplication C[b, i, j, k] = sum_l A[b, i, j, l] * B[l, k]."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
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
