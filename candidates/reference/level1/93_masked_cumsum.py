# Calibration candidate generated from problems/level1/93_masked_cumsum.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Cumulative sum of the elements selected by a boolean mask."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """cumsum(x * mask) along `dim`."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x * mask, dim=self.dim)


batch_size = 2048
input_shape = (32768,)
dim = 1


def get_inputs():
    x = torch.rand(batch_size, *input_shape)
    mask = torch.randint(0, 2, x.shape).bool()
    return [x, mask]


def get_init_inputs():
    return [dim]
