# Generated from problems/level1/73_conv_transposed_3D_asymmetric_input_square_kernel__strided_padded__grouped.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""Strided, padded transposed 3D convolution with a cubic kernel."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """ConvTranspose3d with a cubic kernel, stride and padding.

    Only stride and padding reach the convolution: get_init_inputs() passes `groups`
    positionally into the `output_padding` slot, so the layer is ungrouped and has no
    output padding (weight shape [in_channels, out_channels, k, k, k]).
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int,
        stride: int = 1,
        padding: int = 0,
        output_padding: int = 0,
        groups: int = 1,
        bias: bool = False,
    ):
        super().__init__()
        self.conv_transpose3d = nn.ConvTranspose3d(
            in_channels,
            out_channels,
            (kernel_size, kernel_size, kernel_size),
            stride=stride,
            padding=padding,
            bias=bias,
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv_transpose3d(x)


batch_size = 4
in_channels = 32
out_channels = 32
kernel_size = 3
depth = 32
height = 64
width = 128
stride = 2
padding = 1
groups = 4


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, groups]


class ModelNew(nn.Module):
    """The problem's own Model under torch.compile: built with the same arguments, so it draws
    the same weights, and compiled at its first call."""

    def __init__(self, *args):
        super().__init__()
        self.compiled = torch.compile(Model(*args))

    def forward(self, *inputs):
        return self.compiled(*inputs)
