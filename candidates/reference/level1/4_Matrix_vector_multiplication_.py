# Calibration candidate generated from problems/level1/4_Matrix_vector_multiplication_.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Matrix-vector multiplication of an (M, K) matrix with a (K, 1) column vector."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
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
