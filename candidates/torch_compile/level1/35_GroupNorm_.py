# Generated from problems/level1/35_GroupNorm_.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""Group normalization of a (N, C, H, W) tensor."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Applies nn.GroupNorm with num_groups groups over num_features channels."""

    def __init__(self, num_features: int, num_groups: int):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups=num_groups, num_channels=num_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.gn(x)


batch_size = 7
features = 64
num_groups = 8
dim1 = 512
dim2 = 512


def get_inputs():
    scale = torch.rand(batch_size, features, 1, 1) * 1.5 + 0.5
    shift = torch.randn(batch_size, features, 1, 1)
    x = torch.randn(batch_size, features, dim1, dim2) * scale + shift
    return [x]


def get_init_inputs():
    return [features, num_groups]


class ModelNew(nn.Module):
    """The problem's own Model under torch.compile: built with the same arguments, so it draws
    the same weights, and compiled at its first call."""

    def __init__(self, *args):
        super().__init__()
        self.compiled = torch.compile(Model(*args))

    def forward(self, *inputs):
        return self.compiled(*inputs)
