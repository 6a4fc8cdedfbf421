# Calibration candidate generated from problems/level1/16_Matmul_with_transposed_A.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Matrix multiplication C = A.T @ B with A stored as (K, M)."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Matrix multiplication with the first operand transposed."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A.T, B)


M = 2048
K = 8192
N = 4096


def get_inputs():
    A = torch.randn(K, M)
    B = torch.randn(K, N)
    return [A, B]


def get_init_inputs():
    return []
