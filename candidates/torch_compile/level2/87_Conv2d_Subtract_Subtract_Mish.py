# Generated from problems/level2/87_Conv2d_Subtract_Subtract_Mish.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""2D convolution, subtract two constants, then Mish."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Conv2d -> subtract a scalar -> subtract another scalar -> Mish."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int,
        subtract_value_1: float,
        subtract_value_2: float,
    ):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.subtract_value_1 = subtract_value_1
        self.subtract_value_2 = subtract_value_2

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = x - self.subtract_value_1
        x = x - self.subtract_value_2
        return torch.nn.functional.mish(x)


batch_size = 32
in_channels = 8
out_channels = 64
height = 256
width = 256
kernel_size = 3
subtract_value_1 = 0.5
subtract_value_2 = 0.2


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, subtract_value_1, subtract_value_2]


class ModelNew(nn.Module):
    """The problem's own Model under torch.compile: built with the same arguments, so it draws
    the same weights, and compiled at its first call."""

    def __init__(self, *args):
        super().__init__()
        self.compiled = torch.compile(Model(*args))

    def forward(self, *inputs):
        return self.compiled(*inputs)
