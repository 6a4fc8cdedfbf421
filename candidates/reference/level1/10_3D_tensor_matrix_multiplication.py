# Calibration candidate generated from problems/level1/10_3D_tensor_matrix_multiplication.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Multiplication of a 3D tensor (N, M, K) by a matrix (K, L) over the last dimension."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
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
