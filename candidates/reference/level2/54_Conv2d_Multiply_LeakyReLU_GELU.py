# Calibration candidate generated from problems/level2/54_Conv2d_Multiply_LeakyReLU_GELU.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""2D convolution, multiply by a learned per-channel factor, LeakyReLU, then GELU."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Conv2d -> multiply by a learnable (C, 1, 1) tensor -> LeakyReLU -> GELU."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, multiplier_shape):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.multiplier = nn.Parameter(torch.randn(multiplier_shape))
        self.leaky_relu = nn.LeakyReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = x * self.multiplier
        x = self.leaky_relu(x)
        return torch.nn.functional.gelu(x)


batch_size = 64
in_channels = 64
out_channels = 64
height = 256
width = 256
kernel_size = 3
multiplier_shape = (out_channels, 1, 1)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, multiplier_shape]
