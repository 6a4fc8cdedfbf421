# Calibration candidate generated from problems/level1/81_conv_transposed_2D_asymmetric_input_square_kernel___dilated____padded____strided__.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Dilated, padded, strided transposed 2D convolution with a square kernel."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """ConvTranspose2d with a square kernel, stride, padding and dilation."""

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
        self.conv_transpose2d = nn.ConvTranspose2d(
            in_channels,
            out_channels,
            kernel_size,
            stride=stride,
            padding=padding,
            dilation=dilation,
            bias=bias,
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv_transpose2d(x)


batch_size = 16
in_channels = 32
out_channels = 64
kernel_size = 3
height_in = 64
width_in = 128
stride = 5
padding = 1
dilation = 2


def get_inputs():
    return [torch.randn(batch_size, in_channels, height_in, width_in)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, dilation]
