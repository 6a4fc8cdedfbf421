# Generated from problems/level2/7_Conv3d_ReLU_LeakyReLU_GELU_Sigmoid_BiasAdd.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""3D convolution followed by ReLU, LeakyReLU, GELU, sigmoid and a bias add."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Conv3d -> ReLU -> LeakyReLU -> GELU -> sigmoid -> add a learned bias."""

    def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        x = self.conv(x)
        x = torch.relu(x)
        x = F.leaky_relu(x, negative_slope=0.01)
        x = F.gelu(x)
        x = torch.sigmoid(x)
        x = x + self.bias
        return x


batch_size = 64
in_channels = 8
out_channels = 32
depth = 32
height = 64
width = 64
kernel_size = 3
bias_shape = (out_channels, 1, 1, 1)


def get_inputs():
    return [torch.rand(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, bias_shape]


class ModelNew(nn.Module):
    """The problem's own Model under torch.compile: built with the same arguments, so it draws
    the same weights, and compiled at its first call."""

    def __init__(self, *args):
        super().__init__()
        self.compiled = torch.compile(Model(*args))

    def forward(self, *inputs):
        return self.compiled(*inputs)
