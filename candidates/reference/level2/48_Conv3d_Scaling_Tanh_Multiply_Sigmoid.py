# Calibration candidate generated from problems/level2/48_Conv3d_Scaling_Tanh_Multiply_Sigmoid.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""3D convolution, learned scaling, tanh, learned multiply, then sigmoid."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Conv3d -> multiply by a learned scale -> tanh -> multiply by a learned bias -> sigmoid."""

    def __init__(self, in_channels, out_channels, kernel_size, scaling_factor, bias_shape):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.scaling_factor = nn.Parameter(torch.randn(bias_shape))
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        x = self.conv(x)
        x = x * self.scaling_factor
        x = torch.tanh(x)
        x = x * self.bias
        x = torch.sigmoid(x)
        return x


batch_size = 128
in_channels = 3
out_channels = 16
depth = 16
height = 64
width = 64
kernel_size = 3
scaling_factor = 2
bias_shape = (out_channels, 1, 1, 1)


def get_inputs():
    return [torch.rand(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, scaling_factor, bias_shape]
