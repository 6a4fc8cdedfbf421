# Calibration candidate generated from problems/level1/23_Softmax.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Row-wise softmax over a long feature dimension."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Applies softmax along dim 1 of a (batch_size, dim) tensor."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


batch_size = 4096
dim = 24576


def get_inputs():
    x = torch.randn(batch_size, dim) * 4.0
    return [x]


def get_init_inputs():
    return []
