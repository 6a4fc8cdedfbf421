# Calibration candidate generated from problems/level1/52_Argmin_over_a_dimension.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Argmin of a 3D tensor over one dimension."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Returns the indices of the minimum values along `dim`."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.argmin(x, dim=self.dim)


batch_size = 16
dim1 = 4096
dim2 = 4095
dim = 1


def get_inputs():
    return [torch.randn(batch_size, dim1, dim2)]


def get_init_inputs():
    return [dim]
