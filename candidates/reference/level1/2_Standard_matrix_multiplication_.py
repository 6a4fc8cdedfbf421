# Calibration candidate generated from problems/level1/2_Standard_matrix_multiplication_.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Matrix multiplication C = A @ B with A of shape (M, K) and B of shape (K, N)."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Single matrix multiplication of an (M, K) and a (K, N) matrix."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


M = 2048
K = 8192
N = 4096


def get_inputs():
    A = torch.randn(M, K)
    B = torch.randn(K, N)
    return [A, B]


def get_init_inputs():
    return []
