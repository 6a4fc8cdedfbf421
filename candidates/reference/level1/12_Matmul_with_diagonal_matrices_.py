# Calibration candidate generated from problems/level1/12_Matmul_with_diagonal_matrices_.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Multiplication of a diagonal matrix, given by its diagonal, with a dense matrix."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Builds diag(A) explicitly and multiplies it with B (row scaling of B)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.diag(A) @ B


M = 4096
N = 4096


def get_inputs():
    A = torch.randn(N)
    B = torch.randn(N, M)
    return [A, B]


def get_init_inputs():
    return []
