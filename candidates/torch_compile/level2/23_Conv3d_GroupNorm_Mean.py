# Generated from problems/level2/23_Conv3d_GroupNorm_Mean.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""3D convolution, group norm, then the mean over all non-batch dims."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Conv3d -> GroupNorm (non-identity affine) -> mean over C, D, H, W."""

    def __init__(self, in_channels, out_channels, kernel_size, num_groups):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.group_norm = nn.GroupNorm(num_groups, out_channels)
        # With the default affine (ones, zeros) the result is identically zero.
        with torch.no_grad():
            self.group_norm.weight.normal_(1.0, 0.5)
            self.group_norm.bias.normal_(0.0, 0.5)

    def forward(self, x):
        x = self.conv(x)
        x = self.group_norm(x)
        x = x.mean(dim=[1, 2, 3, 4])
        return x


batch_size = 128
in_channels = 3
out_channels = 24
D, H, W = 24, 32, 32
kernel_size = 3
num_groups = 8


def get_inputs():
    # A per-sample offset makes the normalized channel means differ between samples.
    offset = torch.randn(batch_size, 1, 1, 1, 1)
    return [torch.rand(batch_size, in_channels, D, H, W) + offset]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, num_groups]


class ModelNew(nn.Module):
    """The problem's own Model under torch.compile: built with the same arguments, so it draws
    the same weights, and compiled at its first call."""

    def __init__(self, *args):
        super().__init__()
        self.compiled = torch.compile(Model(*args))

    def forward(self, *inputs):
        return self.compiled(*inputs)
