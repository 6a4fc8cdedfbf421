# Calibration candidate generated from problems/level2/19_ConvTranspose2d_GELU_GroupNorm.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Transposed 2D convolution, GELU, then group norm."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    """ConvTranspose2d -> GELU -> GroupNorm."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, groups, num_groups):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose2d(
            in_channels, out_channels, kernel_size, stride=stride
        )
        self.group_norm = nn.GroupNorm(num_groups=num_groups, num_channels=out_channels)

    def forward(self, x):
        x = self.conv_transpose(x)
        x = F.gelu(x)
        x = self.group_norm(x)
        return x


batch_size = 16
in_channels = 64
out_channels = 64
height = 256
width = 256
kernel_size = 3
stride = 1
groups = 8
num_groups = 8


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, groups, num_groups]
