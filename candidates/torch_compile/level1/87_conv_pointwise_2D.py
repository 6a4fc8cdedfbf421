# Generated from problems/level1/87_conv_pointwise_2D.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""Pointwise (1x1) 2D convolution."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Conv2d with a 1x1 kernel (a per-pixel channel mix)."""

    def __init__(self, in_channels: int, out_channels: int, bias: bool = False):
        super().__init__()
        self.conv1d = nn.Conv2d(in_channels, out_channels, kernel_size=1, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv1d(x)


batch_size = 4
in_channels = 64
out_channels = 128
width = 512
height = 512


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]


class ModelNew(nn.Module):
    """The problem's own Model under torch.compile: built with the same arguments, so it draws
    the same weights, and compiled at its first call."""

    def __init__(self, *args):
        super().__init__()
        self.compiled = torch.compile(Model(*args))

    def forward(self, *inputs):
        return self.compiled(*inputs)
