# Generated from problems/level1/59_conv_standard_3D__asymmetric_input__square_kernel.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""Standard 3D convolution on a flat volume with a square (k x k x 1) kernel."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Conv3d with a kernel_size x kernel_size x 1 kernel."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int,
        stride: int = 1,
        padding: int = 0,
        dilation: int = 1,
        groups: int = 1,
        bias: bool = False,
    ):
        super().__init__()
        self.conv3d = nn.Conv3d(
            in_channels,
            out_channels,
            (kernel_size, kernel_size, 1),
            stride=stride,
            padding=padding,
            dilation=dilation,
            groups=groups,
            bias=bias,
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv3d(x)


batch_size = 4
in_channels = 3
out_channels = 64
kernel_size = 3
width = 256
height = 256
depth = 10


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width, depth)]


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
