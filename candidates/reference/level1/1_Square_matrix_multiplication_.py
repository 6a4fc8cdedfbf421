# Calibration candidate generated from problems/level1/1_Square_matrix_multiplication_.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Square matrix multiplication C = A @ B with N x N operands."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Single square matrix multiplication."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


N = 4096


def get_inputs():
    A = torch.randn(N, N)
    B = torch.randn(N, N)
    return [A, B]


def get_init_inputs():
    return []
