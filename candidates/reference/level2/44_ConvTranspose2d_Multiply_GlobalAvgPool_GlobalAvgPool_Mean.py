# Calibration candidate generated from problems/level2/44_ConvTranspose2d_Multiply_GlobalAvgPool_GlobalAvgPool_Mean.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Transposed 2D convolution, scaling, then two global average pools."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """ConvTranspose2d -> multiply -> global mean over H, W -> global mean over H, W (both kept)."""

    def __init__(
        self, in_channels, out_channels, kernel_size, stride, padding, output_padding, multiplier
    ):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose2d(
            in_channels,
            out_channels,
            kernel_size,
            stride=stride,
            padding=padding,
            output_padding=output_padding,
        )
        self.multiplier = multiplier

    def forward(self, x):
        x = self.conv_transpose(x)
        x = x * self.multiplier
        x = torch.mean(x, dim=[2, 3], keepdim=True)
        x = torch.mean(x, dim=[2, 3], keepdim=True)
        return x


batch_size = 16
in_channels = 64
out_channels = 128
height = 128
width = 128
kernel_size = 3
stride = 2
padding = 1
output_padding = 1
multiplier = 0.5


def get_inputs():
    # A per-(sample, channel) offset: the global mean this chain ends in then depends on the
    # input (with U[0,1) alone every sample gave nearly the same output).
    offset = torch.randn(batch_size, in_channels, 1, 1)
    return [torch.rand(batch_size, in_channels, height, width) + offset]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, output_padding, multiplier]
