# Calibration candidate generated from problems/level1/78_conv_transposed_2D_asymmetric_input_asymmetric_kernel___padded__.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Padded transposed 2D convolution on a non-square input with a non-square kernel."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """ConvTranspose2d with per-axis stride and padding."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: tuple,
        stride: tuple = (1, 1),
        padding: tuple = (0, 0),
        bias: bool = False,
    ):
        super().__init__()
        self.conv_transpose2d = nn.ConvTranspose2d(
            in_channels,
            out_channels,
            kernel_size,
            stride=stride,
            padding=padding,
            bias=bias,
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv_transpose2d(x)


batch_size = 8
in_channels = 32
out_channels = 32
kernel_size = (3, 7)
height = 512
width = 1024
stride = (1, 1)
padding = (1, 3)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding]
