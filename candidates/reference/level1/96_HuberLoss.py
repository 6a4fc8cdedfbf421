# Calibration candidate generated from problems/level1/96_HuberLoss.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Huber (smooth L1) loss between predictions and targets."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """torch.nn.functional.smooth_l1_loss (beta=1, mean reduction)."""

    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.smooth_l1_loss(predictions, targets)


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
