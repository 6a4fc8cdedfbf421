# Calibration candidate generated from problems/level2/38_ConvTranspose3d_AvgPool_Clamp_Softmax_Multiply.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Transposed 3D convolution, average pooling, clamp, channel softmax, then a learned scale."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """ConvTranspose3d -> AvgPool3d -> clamp -> channel softmax -> multiply by a learned scale."""

    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride,
        padding,
        output_padding,
        pool_kernel_size,
        clamp_min,
        clamp_max,
    ):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(
            in_channels,
            out_channels,
            kernel_size,
            stride=stride,
            padding=padding,
            output_padding=output_padding,
        )
        self.avg_pool = nn.AvgPool3d(pool_kernel_size)
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max
        self.scale = nn.Parameter(torch.ones(1, out_channels, 1, 1, 1))

    def forward(self, x):
        x = self.conv_transpose(x)
        x = self.avg_pool(x)
        x = torch.clamp(x, self.clamp_min, self.clamp_max)
        x = torch.softmax(x, dim=1)
        x = x * self.scale
        return x


batch_size = 16
in_channels = 32
out_channels = 64
depth = 32
height = 64
width = 64
kernel_size = 3
stride = 2
padding = 1
output_padding = 1
pool_kernel_size = 2
clamp_min = 0.0
clamp_max = 1.0


def get_inputs():
    return [16.0 * torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [
        in_channels,
        out_channels,
        kernel_size,
        stride,
        padding,
        output_padding,
        pool_kernel_size,
        clamp_min,
        clamp_max,
    ]
