# Calibration candidate generated from problems/level1/91_cumsum_reverse.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Reverse (suffix) cumulative sum along one dimension."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """flip -> cumsum -> flip along `dim`."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x.flip(self.dim), dim=self.dim).flip(self.dim)


batch_size = 4096
input_shape = (32768,)
dim = 1


def get_inputs():
    return [torch.rand(batch_size, *input_shape)]


def get_init_inputs():
    return [dim]
