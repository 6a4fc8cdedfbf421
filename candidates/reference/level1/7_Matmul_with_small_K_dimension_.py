# Calibration candidate generated from problems/level1/7_Matmul_with_small_K_dimension_.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Matrix multiplication with a large (M, N) output and a small reduction dimension K."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Single matrix multiplication whose cost is dominated by writing the output."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


M = 16384
N = 8192
K = 64


def get_inputs():
    A = torch.randn(M, K)
    B = torch.randn(K, N)
    return [A, B]


def get_init_inputs():
    return []
