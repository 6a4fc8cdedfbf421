# Calibration candidate generated from problems/level1/77_conv_transposed_3D_square_input_square_kernel___padded____dilated____strided__.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Padded, dilated, strided transposed 3D convolution with a cubic kernel."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """ConvTranspose3d with a cubic kernel, stride, padding and dilation."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int,
        stride: int = 1,
        padding: int = 0,
        dilation: int = 1,
        bias: bool = False,
    ):
        super().__init__()
        self.conv_transpose3d = nn.ConvTranspose3d(
            in_channels,
            out_channels,
            (kernel_size, kernel_size, kernel_size),
            stride=stride,
            padding=padding,
            dilation=dilation,
            bias=bias,
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv_transpose3d(x)


batch_size = 16
in_channels = 32
out_channels = 64
kernel_size = 3
depth = 16
height = 32
width = 32
stride = 2
padding = 1
dilation = 2


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, dilation]
