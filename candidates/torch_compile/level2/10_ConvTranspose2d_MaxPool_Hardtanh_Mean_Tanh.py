# Generated from problems/level2/10_ConvTranspose2d_MaxPool_Hardtanh_Mean_Tanh.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""Transposed 2D convolution, max pooling, hardtanh, spatial mean and tanh."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """ConvTranspose2d -> MaxPool2d -> hardtanh -> mean over H, W -> tanh."""

    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride,
        padding,
        maxpool_kernel_size,
        maxpool_stride,
        hardtanh_min,
        hardtanh_max,
    ):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose2d(
            in_channels, out_channels, kernel_size, stride=stride, padding=padding
        )
        self.maxpool = nn.MaxPool2d(kernel_size=maxpool_kernel_size, stride=maxpool_stride)
        self.hardtanh = nn.Hardtanh(min_val=hardtanh_min, max_val=hardtanh_max)

    def forward(self, x):
        x = self.conv_transpose(x)
        x = self.maxpool(x)
        x = self.hardtanh(x)
        x = torch.mean(x, dim=(2, 3), keepdim=True)
        x = torch.tanh(x)
        return x


batch_size = 32
in_channels = 64
out_channels = 64
height = 256
width = 256
kernel_size = 3
stride = 1
padding = 1
maxpool_kernel_size = 2
maxpool_stride = 2
hardtanh_min = -1
hardtanh_max = 1


def get_inputs():
    # A per-(sample, channel) offset: the spatial mean this chain ends in then depends on the
    # input (with U[0,1) alone every sample gave nearly the same output).
    offset = torch.randn(batch_size, in_channels, 1, 1)
    return [torch.rand(batch_size, in_channels, height, width) + offset]


def get_init_inputs():
    return [
        in_channels,
        out_channels,
        kernel_size,
        stride,
        padding,
        maxpool_kernel_size,
        maxpool_stride,
        hardtanh_min,
        hardtanh_max,
    ]


class ModelNew(nn.Module):
    """The problem's own Model under torch.compile: built with the same arguments, so it draws
    the same weights, and compiled at its first call."""

    def __init__(self, *args):
        super().__init__()
        self.compiled = torch.compile(Model(*args))

    def forward(self, *inputs):
        return self.compiled(*inputs)
