# Calibration candidate generated from problems/level1/64_conv_transposed_1D.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Transposed 1D convolution."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """ConvTranspose1d over a long sequence."""

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
        self.conv1d_transpose = nn.ConvTranspose1d(
            in_channels,
            out_channels,
            kernel_size,
            stride=stride,
            padding=padding,
            output_padding=output_padding,
            groups=groups,
            bias=bias,
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv1d_transpose(x)


batch_size = 8
in_channels = 128
out_channels = 128
kernel_size = 3
length = 65536


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
