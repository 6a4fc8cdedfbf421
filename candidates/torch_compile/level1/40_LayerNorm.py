# Generated from problems/level1/40_LayerNorm.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""Layer normalization over the (C, H, W) dimensions of a (N, C, H, W) tensor."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Applies nn.LayerNorm with an elementwise affine over normalized_shape."""

    def __init__(self, normalized_shape: list):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(x)


batch_size = 16
features = 64
dim1 = 256
dim2 = 256


def get_inputs():
    scale = torch.rand(batch_size, features, 1, 1) * 1.5 + 0.5
    shift = torch.randn(batch_size, features, 1, 1)
    x = torch.randn(batch_size, features, dim1, dim2) * scale + shift
    return [x]


def get_init_inputs():
    return [[features, dim1, dim2]]


class ModelNew(nn.Module):
    """The problem's own Model under torch.compile: built with the same arguments, so it draws
    the same weights, and compiled at its first call."""

    def __init__(self, *args):
        super().__init__()
        self.compiled = torch.compile(Model(*args))

    def forward(self, *inputs):
        return self.compiled(*inputs)
