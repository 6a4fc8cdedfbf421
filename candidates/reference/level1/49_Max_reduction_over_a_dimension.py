# Calibration candidate generated from problems/level1/49_Max_reduction_over_a_dimension.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Max reduction over one dimension."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Takes the maximum of x over a configurable dimension (values only)."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.max(x, dim=self.dim)[0]


batch_size = 16
dim1 = 4096
dim2 = 4095


def get_inputs():
    x = torch.randn(batch_size, dim1, dim2)
    return [x]


def get_init_inputs():
    return [1]
