# Calibration candidate generated from problems/level1/5_Matrix_scalar_multiplication.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Multiplication of an (M, N) matrix by a Python scalar."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Scales every element of A by the scalar s."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, s: float) -> torch.Tensor:
        return A * s


M = 8192
N = 16384


def get_inputs():
    A = torch.randn(M, N)
    s = 3.14
    return [A, s]


def get_init_inputs():
    return []
