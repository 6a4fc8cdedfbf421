# Generated from problems/level1/7_Matmul_with_small_K_dimension_.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""Matrix multiplication with a large (M, N) output and a small reduction dimension K."""

import torch
import torch.nn as nn


class Model(nn.Module):
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


class ModelNew(nn.Module):
    """The problem's own Model under torch.compile: built with the same arguments, so it draws
    the same weights, and compiled at its first call."""

    def __init__(self, *args):
        super().__init__()
        self.compiled = torch.compile(Model(*args))

    def forward(self, *inputs):
        return self.compiled(*inputs)
