# Calibration candidate generated from problems/level1/84_conv_depthwise_2D_asymmetric_input_square_kernel.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Depthwise 2D convolution on a non-square input with a square kernel."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Conv2d with groups == in_channels and a kernel_size x kernel_size filter."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int,
        stride: int = 1,
        padding: int = 0,
        bias: bool = False,
    ):
        super().__init__()
        self.conv2d = nn.Conv2d(
            in_channels,
            out_channels,
            (kernel_size, kernel_size),
            stride=stride,
            padding=padding,
            groups=in_channels,
            bias=bias,
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv2d(x)


batch_size = 8
in_channels = 128
out_channels = 128
kernel_size = 3
width_in = 512
height_in = 256
stride = 1
padding = 0


def get_inputs():
    return [torch.randn(batch_size, in_channels, height_in, width_in)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding]
