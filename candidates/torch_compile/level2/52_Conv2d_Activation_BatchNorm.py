# Generated from problems/level2/52_Conv2d_Activation_BatchNorm.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""2D convolution, Mish-style activation tanh(softplus(x)) * x, then batch normalization."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Conv2d -> x * tanh(softplus(x)) -> BatchNorm2d."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int,
        eps: float = 1e-5,
        momentum: float = 0.1,
    ):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bn = nn.BatchNorm2d(out_channels, eps=eps, momentum=momentum)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = torch.multiply(torch.tanh(torch.nn.functional.softplus(x)), x)
        return self.bn(x)


batch_size = 64
in_channels = 64
out_channels = 128
height = 128
width = 128
kernel_size = 3


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]


class ModelNew(nn.Module):
    """The problem's own Model under torch.compile: built with the same arguments, so it draws
    the same weights, and compiled at its first call."""

    def __init__(self, *args):
        super().__init__()
        self.compiled = torch.compile(Model(*args))

    def forward(self, *inputs):
        return self.compiled(*inputs)
