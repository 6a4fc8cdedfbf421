# Generated from problems/level2/46_Conv2d_Subtract_Tanh_Subtract_AvgPool.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""2D convolution, subtract, tanh, subtract, then average pooling."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Conv2d -> subtract -> tanh -> subtract -> AvgPool2d."""

    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        subtract1_value,
        subtract2_value,
        kernel_size_pool,
    ):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.subtract1_value = subtract1_value
        self.subtract2_value = subtract2_value
        self.avgpool = nn.AvgPool2d(kernel_size_pool)

    def forward(self, x):
        x = self.conv(x)
        x = x - self.subtract1_value
        x = torch.tanh(x)
        x = x - self.subtract2_value
        x = self.avgpool(x)
        return x


batch_size = 128
in_channels = 64
out_channels = 128
height = 128
width = 128
kernel_size = 3
subtract1_value = 0.5
subtract2_value = 0.2
kernel_size_pool = 2


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [
        in_channels,
        out_channels,
        kernel_size,
        subtract1_value,
        subtract2_value,
        kernel_size_pool,
    ]


class ModelNew(nn.Module):
    """The problem's own Model under torch.compile: built with the same arguments, so it draws
    the same weights, and compiled at its first call."""

    def __init__(self, *args):
        super().__init__()
        self.compiled = torch.compile(Model(*args))

    def forward(self, *inputs):
        return self.compiled(*inputs)
