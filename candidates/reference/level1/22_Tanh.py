# Calibration candidate generated from problems/level1/22_Tanh.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Elementwise tanh activation."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Applies tanh elementwise."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(x)


batch_size = 4096
dim = 24576


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
