# Calibration candidate generated from problems/level1/17_Matmul_with_transposed_B.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Matrix multiplication C = A @ B.T with B stored as (N, K)."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Matrix multiplication with the second operand transposed."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B.T)


M = 2048
K = 8192
N = 4096


def get_inputs():
    A = torch.randn(M, K)
    B = torch.randn(N, K)
    return [A, B]


def get_init_inputs():
    return []
