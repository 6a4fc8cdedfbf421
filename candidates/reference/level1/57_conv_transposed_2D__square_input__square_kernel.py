# Calibration candidate generated from problems/level1/57_conv_transposed_2D__square_input__square_kernel.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Transposed 2D convolution on a square input with a square kernel."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """ConvTranspose2d with a kernel_size x kernel_size kernel."""

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
        self.conv_transpose2d = nn.ConvTranspose2d(
            in_channels,
            out_channels,
            (kernel_size, kernel_size),
            stride=stride,
            padding=padding,
            output_padding=output_padding,
            groups=groups,
            bias=bias,
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv_transpose2d(x)


batch_size = 4
in_channels = 64
out_channels = 64
kernel_size = 3
height = 512
width = 512


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
