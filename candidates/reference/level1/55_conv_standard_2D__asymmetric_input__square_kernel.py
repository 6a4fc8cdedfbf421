# Calibration candidate generated from problems/level1/55_conv_standard_2D__asymmetric_input__square_kernel.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Standard 2D convolution on a non-square input with a square kernel."""

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


batch_size = 2
height = 512
width = 1024
in_channels = 64
out_channels = 128
kernel_size = 3


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
