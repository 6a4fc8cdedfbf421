# Generated from problems/level1/45_Average_Pooling_2D.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""2D average pooling with a large kernel (stride defaults to the kernel size)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Applies nn.AvgPool2d to a (N, C, H, W) tensor."""

    def __init__(self, kernel_size: int, stride: int | None = None, padding: int = 0):
        super().__init__()
        self.avg_pool = nn.AvgPool2d(kernel_size=kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.avg_pool(x)


batch_size = 2
channels = 64
height = 1024
width = 1024
kernel_size = 11


def get_inputs():
    x = torch.randn(batch_size, channels, height, width)
    return [x]


def get_init_inputs():
    return [kernel_size]


class ModelNew(nn.Module):
    """The problem's own Model under torch.compile: built with the same arguments, so it draws
    the same weights, and compiled at its first call."""

    def __init__(self, *args):
        super().__init__()
        self.compiled = torch.compile(Model(*args))

    def forward(self, *inputs):
        return self.compiled(*inputs)
