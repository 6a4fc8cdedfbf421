# Generated from problems/level2/78_ConvTranspose3d_Max_Max_Sum.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""3D transposed convolution, two max poolings, then sum over channels."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """ConvTranspose3d -> MaxPool3d(2) -> MaxPool3d(3) -> sum over channels (keepdim)."""

    def __init__(
        self, in_channels: int, out_channels: int, kernel_size: int, stride: int, padding: int
    ):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(
            in_channels, out_channels, kernel_size, stride=stride, padding=padding
        )
        self.max_pool1 = nn.MaxPool3d(kernel_size=2)
        self.max_pool2 = nn.MaxPool3d(kernel_size=3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv_transpose(x)
        x = self.max_pool1(x)
        x = self.max_pool2(x)
        return torch.sum(x, dim=1, keepdim=True)


batch_size = 16
in_channels = 32
out_channels = 64
depth = 32
height = 32
width = 32
kernel_size = 5
stride = 2
padding = 2


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding]


class ModelNew(nn.Module):
    """The problem's own Model under torch.compile: built with the same arguments, so it draws
    the same weights, and compiled at its first call."""

    def __init__(self, *args):
        super().__init__()
        self.compiled = torch.compile(Model(*args))

    def forward(self, *inputs):
        return self.compiled(*inputs)
