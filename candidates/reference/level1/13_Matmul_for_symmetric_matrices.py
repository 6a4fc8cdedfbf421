# Calibration candidate generated from problems/level1/13_Matmul_for_symmetric_matrices.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Matrix multiplication of two symmetric N x N matrices."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Single matrix multiplication whose operands are symmetric."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


N = 4096


def get_inputs():
    A = torch.randn(N, N)
    A = (A + A.T) / 2
    B = torch.randn(N, N)
    B = (B + B.T) / 2
    return [A, B]


def get_init_inputs():
    return []
