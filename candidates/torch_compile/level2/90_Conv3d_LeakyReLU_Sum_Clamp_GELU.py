# Generated from problems/level2/90_Conv3d_LeakyReLU_Sum_Clamp_GELU.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""3D convolution, LeakyReLU, add a learned per-channel tensor, clamp, then GELU."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Conv3d -> LeakyReLU(0.2) -> add a (C, 1, 1, 1) parameter -> clamp(-1, 1) -> GELU."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, sum_tensor_shape):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.sum_tensor = nn.Parameter(torch.randn(sum_tensor_shape))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = torch.nn.functional.leaky_relu(x, negative_slope=0.2)
        x = x + self.sum_tensor
        x = torch.clamp(x, min=-1.0, max=1.0)
        return torch.nn.functional.gelu(x)


batch_size = 128
in_channels = 8
out_channels = 64
depth = 16
height = 64
width = 64
kernel_size = 3
sum_tensor_shape = (out_channels, 1, 1, 1)


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, sum_tensor_shape]


class ModelNew(nn.Module):
    """The problem's own Model under torch.compile: built with the same arguments, so it draws
    the same weights, and compiled at its first call."""

    def __init__(self, *args):
        super().__init__()
        self.compiled = torch.compile(Model(*args))

    def forward(self, *inputs):
        return self.compiled(*inputs)
