# Calibration candidate generated from problems/level1/79_conv_transposed_1D_asymmetric_input_square_kernel___padded____strided____dilated__.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Padded, strided, dilated transposed 1D convolution."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """ConvTranspose1d with stride, padding and dilation."""

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
        self.conv1d_transpose = nn.ConvTranspose1d(
            in_channels,
            out_channels,
            kernel_size,
            stride=stride,
            padding=padding,
            dilation=dilation,
            bias=bias,
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv1d_transpose(x)


batch_size = 16
in_channels = 32
out_channels = 64
kernel_size = 3
length = 131072
stride = 2
padding = 1
dilation = 2


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, dilation]
