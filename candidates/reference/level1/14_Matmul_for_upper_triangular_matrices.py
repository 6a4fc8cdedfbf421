# Calibration candidate generated from problems/level1/14_Matmul_for_upper_triangular_matrices.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Matrix multiplication of two upper triangular N x N matrices."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Multiplies two upper triangular matrices and keeps the upper triangle of the product."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.triu(torch.matmul(A, B))


N = 4096


def get_inputs():
    A = torch.triu(torch.randn(N, N))
    B = torch.triu(torch.randn(N, N))
    return [A, B]


def get_init_inputs():
    return []
