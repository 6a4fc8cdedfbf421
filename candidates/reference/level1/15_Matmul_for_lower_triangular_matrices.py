# Calibration candidate generated from problems/level1/15_Matmul_for_lower_triangular_matrices.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Matrix multiplication of two lower triangular M x M matrices."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Multiplies two lower triangular matrices and keeps the lower triangle of the product."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.tril(torch.matmul(A, B))


M = 4096


def get_inputs():
    A = torch.tril(torch.randn(M, M))
    B = torch.tril(torch.randn(M, M))
    return [A, B]


def get_init_inputs():
    return []
