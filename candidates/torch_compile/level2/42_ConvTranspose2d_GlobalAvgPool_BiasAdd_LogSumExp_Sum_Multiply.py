# Generated from problems/level2/42_ConvTranspose2d_GlobalAvgPool_BiasAdd_LogSumExp_Sum_Multiply.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""Transposed 2D convolution, global average pool, bias add, channel logsumexp, sum and scaling."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """ConvTranspose2d -> mean over H, W -> add bias -> channel logsumexp -> sum -> x10."""

    def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose2d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        x = self.conv_transpose(x)
        x = torch.mean(x, dim=(2, 3), keepdim=True)
        x = x + self.bias
        x = torch.logsumexp(x, dim=1, keepdim=True)
        x = torch.sum(x, dim=(2, 3))
        x = x * 10.0
        return x


batch_size = 16
in_channels = 64
out_channels = 128
height = 512
width = 512
kernel_size = 3
bias_shape = (out_channels, 1, 1)


def get_inputs():
    # A per-sample offset keeps the pooled per-sample results apart.
    offset = torch.randn(batch_size, 1, 1, 1)
    return [torch.randn(batch_size, in_channels, height, width) + offset]


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
