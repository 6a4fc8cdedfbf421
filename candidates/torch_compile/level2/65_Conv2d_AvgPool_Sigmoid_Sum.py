# Generated from problems/level2/65_Conv2d_AvgPool_Sigmoid_Sum.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""2D convolution, average pooling, sigmoid, then sum over channels and space."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Conv2d -> AvgPool2d -> sigmoid -> sum over (C, H, W)."""

    def __init__(
        self, in_channels: int, out_channels: int, kernel_size: int, pool_kernel_size: int
    ):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.avg_pool = nn.AvgPool2d(pool_kernel_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = self.avg_pool(x)
        x = torch.sigmoid(x)
        return torch.sum(x, dim=[1, 2, 3])


batch_size = 128
in_channels = 8
out_channels = 64
height = 384
width = 384
kernel_size = 3
pool_kernel_size = 4


def get_inputs():
    # A random offset per sample and channel shifts whole feature maps, so the
    # per-sample sums differ by several percent instead of all being ~C*H*W/2.
    x = torch.randn(batch_size, in_channels, height, width)
    return [x + torch.randn(batch_size, in_channels, 1, 1)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, pool_kernel_size]


class ModelNew(nn.Module):
    """The problem's own Model under torch.compile: built with the same arguments, so it draws
    the same weights, and compiled at its first call."""

    def __init__(self, *args):
        super().__init__()
        self.compiled = torch.compile(Model(*args))

    def forward(self, *inputs):
        return self.compiled(*inputs)
