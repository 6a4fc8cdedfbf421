# Calibration candidate generated from problems/level1/32_HardTanh.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Elementwise HardTanh activation clamping to [-1, 1]."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    """Applies HardTanh with min_val=-1 and max_val=1."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.hardtanh(x, min_val=-1.0, max_val=1.0)


batch_size = 4096
dim = 24576


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
