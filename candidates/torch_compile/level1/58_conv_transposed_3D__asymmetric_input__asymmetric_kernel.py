# Generated from problems/level1/58_conv_transposed_3D__asymmetric_input__asymmetric_kernel.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""Transposed 3D convolution on a non-cubic input with a non-cubic kernel."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """ConvTranspose3d with a (kernel_d, kernel_h, kernel_w) kernel."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: tuple,
        stride: tuple = (1, 1, 1),
        padding: tuple = (0, 0, 0),
        output_padding: tuple = (0, 0, 0),
        groups: int = 1,
        bias: bool = False,
    ):
        super().__init__()
        self.conv_transpose3d = nn.ConvTranspose3d(
            in_channels,
            out_channels,
            kernel_size,
            stride=stride,
            padding=padding,
            output_padding=output_padding,
            groups=groups,
            bias=bias,
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv_transpose3d(x)


batch_size = 16
in_channels = 32
out_channels = 16
kernel_size = (3, 5, 7)
depth_in = 16
height_in = 32
width_in = 64


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth_in, height_in, width_in)]


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
