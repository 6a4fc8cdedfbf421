# Generated from problems/level1/100_HingeLoss.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""Hinge loss mean(clamp(1 - predictions * targets, min=0)) with +/-1 targets."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """mean(clamp(1 - predictions * targets, min=0)); targets broadcast over the last dim."""

    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.mean(torch.clamp(1 - predictions * targets, min=0))


batch_size = 8192
input_shape = (8192,)
dim = 1


def get_inputs():
    # A per-draw scale (>= 1, so the clamp is active) makes the loss depend on the data.
    scale = torch.rand(()) * 3 + 1
    predictions = torch.randn(batch_size, *input_shape) * scale
    targets = torch.randint(0, 2, (batch_size,)).float() * 2 - 1
    return [predictions, targets]


def get_init_inputs():
    return []


class ModelNew(nn.Module):
    """The problem's own Model under torch.compile: built with the same arguments, so it draws
    the same weights, and compiled at its first call."""

    def __init__(self, *args):
        super().__init__()
        self.compiled = torch.compile(Model(*args))

    def forward(self, *inputs):
        return self.compiled(*inputs)
