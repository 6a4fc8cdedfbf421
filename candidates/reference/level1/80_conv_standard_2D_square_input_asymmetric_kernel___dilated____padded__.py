# Calibration candidate generated from problems/level1/80_conv_standard_2D_square_input_asymmetric_kernel___dilated____padded__.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Dilated, padded standard 2D convolution on a square input with a non-square kernel."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Conv2d with a (kernel_h, kernel_w) kernel, per-axis padding and dilation."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: tuple,
        stride: int = 1,
        padding: tuple = (0, 0),
        dilation: tuple = (1, 1),
        bias: bool = False,
    ):
        super().__init__()
        self.conv2d = nn.Conv2d(
            in_channels,
            out_channels,
            kernel_size,
            stride=stride,
            padding=padding,
            dilation=dilation,
            bias=bias,
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv2d(x)


batch_size = 8
in_channels = 32
out_channels = 64
kernel_size = (5, 9)
width = 512
height = 512
stride = 1
padding = (2, 4)
dilation = (2, 3)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, dilation]
