# Calibration candidate generated from problems/level1/9_Tall_skinny_matrix_multiplication_.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Outer-product-like matrix multiplication of a tall (M, N) and a wide (N, M) matrix."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Matrix multiplication of a tall-skinny and a short-wide matrix (tiny inner dimension N)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


M = 8192
N = 32


def get_inputs():
    A = torch.randn(M, N)
    B = torch.randn(N, M)
    return [A, B]


def get_init_inputs():
    return []
