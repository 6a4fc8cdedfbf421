# Calibration candidate generated from problems/level2/82_Conv2d_Tanh_Scaling_BiasAdd_Max.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""2D convolution, tanh, scale, add a learned per-channel bias, then max pooling."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Conv2d -> tanh -> multiply by a scalar -> add a (C, 1, 1) bias -> MaxPool2d."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int,
        scaling_factor: float,
        bias_shape,
        pool_kernel_size: int,
    ):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.scaling_factor = scaling_factor
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.max_pool = nn.MaxPool2d(pool_kernel_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = torch.tanh(x)
        x = x * self.scaling_factor
        x = x + self.bias
        return self.max_pool(x)


batch_size = 128
in_channels = 8
out_channels = 64
height = 256
width = 256
kernel_size = 3
scaling_factor = 2.0
bias_shape = (out_channels, 1, 1)
pool_kernel_size = 4


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, scaling_factor, bias_shape, pool_kernel_size]
