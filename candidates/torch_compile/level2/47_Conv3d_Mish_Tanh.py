# Generated from problems/level2/47_Conv3d_Mish_Tanh.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""3D convolution, Mish, then tanh."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Conv3d -> Mish -> tanh."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0):
        super().__init__()
        self.conv = nn.Conv3d(
            in_channels, out_channels, kernel_size, stride=stride, padding=padding
        )

    def forward(self, x):
        x = self.conv(x)
        x = F.mish(x)
        x = torch.tanh(x)
        return x


batch_size = 16
in_channels = 32
out_channels = 64
D, H, W = 32, 64, 64
kernel_size = 3


def get_inputs():
    return [torch.rand(batch_size, in_channels, D, H, W)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]


class ModelNew(nn.Module):
    """The problem's own Model under torch.compile: built with the same arguments, so it draws
    the same weights, and compiled at its first call."""

    def __init__(self, *args):
        super().__init__()
        self.compiled = torch.compile(Model(*args))

    def forward(self, *inputs):
        return self.compiled(*inputs)
