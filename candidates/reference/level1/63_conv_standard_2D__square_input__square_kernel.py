# Calibration candidate generated from problems/level1/63_conv_standard_2D__square_input__square_kernel.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Standard 2D convolution on a square input with a square kernel."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Conv2d with a kernel_size x kernel_size kernel."""

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
        self.conv2d = nn.Conv2d(
            in_channels,
            out_channels,
            (kernel_size, kernel_size),
            stride=stride,
            padding=padding,
            dilation=dilation,
            groups=groups,
            bias=bias,
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv2d(x)


batch_size = 4
in_channels = 16
out_channels = 128
kernel_size = 3
width = 512
height = 512


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
