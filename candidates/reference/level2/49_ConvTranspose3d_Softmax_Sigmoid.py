# Calibration candidate generated from problems/level2/49_ConvTranspose3d_Softmax_Sigmoid.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Transposed 3D convolution, channel softmax, then sigmoid."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """ConvTranspose3d -> softmax over channels -> sigmoid."""

    def __init__(
        self, in_channels, out_channels, kernel_size, stride, padding, output_padding, bias=True
    ):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(
            in_channels,
            out_channels,
            kernel_size,
            stride=stride,
            padding=padding,
            output_padding=output_padding,
            bias=bias,
        )
        self.softmax = nn.Softmax(dim=1)
        self.sigmoid = nn.Sigmoid()

    def forward(self, x):
        x = self.conv_transpose(x)
        x = self.softmax(x)
        x = self.sigmoid(x)
        return x


batch_size = 16
in_channels = 32
out_channels = 64
D, H, W = 16, 32, 32
kernel_size = 3
stride = 2
padding = 1
output_padding = 1


def get_inputs():
    return [16.0 * torch.randn(batch_size, in_channels, D, H, W)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, output_padding]
