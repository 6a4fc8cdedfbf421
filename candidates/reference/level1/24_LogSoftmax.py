# Calibration candidate generated from problems/level1/24_LogSoftmax.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Row-wise log-softmax over a long feature dimension."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Applies log-softmax along a configurable dimension."""

    def __init__(self, dim: int = 1):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(x, dim=self.dim)


batch_size = 4096
dim = 24576


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
