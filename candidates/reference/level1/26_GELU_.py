# Calibration candidate generated from problems/level1/26_GELU_.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Elementwise GELU activation (exact erf form)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    """Applies GELU elementwise."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(x)


batch_size = 4096
dim = 24576


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
