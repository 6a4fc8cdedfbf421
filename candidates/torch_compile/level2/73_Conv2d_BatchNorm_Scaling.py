# Generated from problems/level2/73_Conv2d_BatchNorm_Scaling.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""2D convolution, batch normalization, then scale."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Conv2d -> BatchNorm2d -> multiply by a scalar."""

    def __init__(
        self, in_channels: int, out_channels: int, kernel_size: int, scaling_factor: float
    ):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bn = nn.BatchNorm2d(out_channels)
        self.scaling_factor = scaling_factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = self.bn(x)
        return x * self.scaling_factor


batch_size = 128
in_channels = 8
out_channels = 64
height = 128
width = 128
kernel_size = 3
scaling_factor = 2.0


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, scaling_factor]


class ModelNew(nn.Module):
    """The problem's own Model under torch.compile: built with the same arguments, so it draws
    the same weights, and compiled at its first call."""

    def __init__(self, *args):
        super().__init__()
        self.compiled = torch.compile(Model(*args))

    def forward(self, *inputs):
        return self.compiled(*inputs)
