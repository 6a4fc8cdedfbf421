# Calibration candidate generated from problems/level1/25_Swish.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Elementwise Swish (SiLU) activation x * sigmoid(x)."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Applies Swish, written as x * sigmoid(x)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(x)


batch_size = 4096
dim = 24576


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
