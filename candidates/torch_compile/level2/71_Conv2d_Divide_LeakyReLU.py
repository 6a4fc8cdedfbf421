# Generated from problems/level2/71_Conv2d_Divide_LeakyReLU.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""2D convolution, divide by a constant, then LeakyReLU."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Conv2d -> divide by a scalar -> LeakyReLU(0.01)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, divisor: float):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.divisor = divisor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = x / self.divisor
        return torch.nn.functional.leaky_relu(x, negative_slope=0.01)


batch_size = 128
in_channels = 8
out_channels = 64
height = 128
width = 128
kernel_size = 3
divisor = 2


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, divisor]


class ModelNew(nn.Module):
    """The problem's own Model under torch.compile: built with the same arguments, so it draws
    the same weights, and compiled at its first call."""

    def __init__(self, *args):
        super().__init__()
        self.compiled = torch.compile(Model(*args))

    def forward(self, *inputs):
        return self.compiled(*inputs)
