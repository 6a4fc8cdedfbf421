# Calibration candidate generated from problems/level1/56_conv_standard_2D__asymmetric_input__asymmetric_kernel.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Standard 2D convolution on a non-square input with a non-square kernel."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Conv2d with a (kernel_h, kernel_w) kernel."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: tuple,
        stride: tuple = (1, 1),
        padding: tuple = (0, 0),
        dilation: tuple = (1, 1),
        groups: int = 1,
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
            groups=groups,
            bias=bias,
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv2d(x)


batch_size = 8
in_channels = 64
out_channels = 128
kernel_size = (5, 7)
height = 512
width = 256


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
