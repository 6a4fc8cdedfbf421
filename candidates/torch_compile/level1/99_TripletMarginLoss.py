# Generated from problems/level1/99_TripletMarginLoss.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""Triplet margin loss over (anchor, positive, negative) embeddings."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """torch.nn.TripletMarginLoss (L2 distance, mean reduction)."""

    def __init__(self, margin: float = 1.0):
        super().__init__()
        self.loss_fn = torch.nn.TripletMarginLoss(margin=margin)

    def forward(self, anchor: torch.Tensor, positive: torch.Tensor, negative: torch.Tensor) -> torch.Tensor:
        return self.loss_fn(anchor, positive, negative)


batch_size = 8192
input_shape = (8192,)
dim = 1


def get_inputs():
    # A per-draw scale (>= 1, so the hinge is active) makes the loss depend on the data.
    scale = torch.rand(()) * 3 + 1
    anchor = torch.randn(batch_size, *input_shape) * scale
    positive = torch.randn(batch_size, *input_shape) * scale
    negative = torch.randn(batch_size, *input_shape) * scale
    return [anchor, positive, negative]


def get_init_inputs():
    return [1.0]


class ModelNew(nn.Module):
    """The problem's own Model under torch.compile: built with the same arguments, so it draws
    the same weights, and compiled at its first call."""

    def __init__(self, *args):
        super().__init__()
        self.compiled = torch.compile(Model(*args))

    def forward(self, *inputs):
        return self.compiled(*inputs)
