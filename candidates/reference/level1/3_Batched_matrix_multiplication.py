# Calibration candidate generated from problems/level1/3_Batched_matrix_multiplication.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Batched matrix multiplication C[b] = A[b] @ B[b]."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Batched matrix multiplication of (batch, m, k) and (batch, k, n) tensors."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.bmm(A, B)


batch_size = 128
m = 512
k = 1024
n = 2048


def get_inputs():
    A = torch.randn(batch_size, m, k)
    B = torch.randn(batch_size, k, n)
    return [A, B]


def get_init_inputs():
    return []
