# Calibration candidate generated from problems/level1/20_LeakyReLU.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Elementwise LeakyReLU activation."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    """Applies LeakyReLU with a configurable negative slope."""

    def __init__(self, negative_slope: float = 0.01):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.leaky_relu(x, negative_slope=self.negative_slope)


batch_size = 4096
dim = 24576


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
