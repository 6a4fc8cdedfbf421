# Calibration candidate generated from problems/level1/94_MSELoss.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Mean squared error between predictions and targets."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """mean((predictions - targets) ** 2)."""

    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.mean((predictions - targets) ** 2)


batch_size = 2048
input_shape = (32768,)
dim = 1


def get_inputs():
    # A per-draw scale makes the loss value depend on the data, not a fixed constant.
    scale = torch.rand(()) * 2 + 0.5
    predictions = torch.randn(batch_size, *input_shape) * scale
    targets = torch.randn(batch_size, *input_shape)
    return [predictions, targets]


def get_init_inputs():
    return []
