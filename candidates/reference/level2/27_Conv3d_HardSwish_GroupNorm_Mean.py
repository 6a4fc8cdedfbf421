# Calibration candidate generated from problems/level2/27_Conv3d_HardSwish_GroupNorm_Mean.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""3D convolution, HardSwish, group norm, then the spatial mean."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    """Conv3d -> HardSwish -> GroupNorm -> mean over D, H, W."""

    def __init__(self, in_channels, out_channels, kernel_size, num_groups=4, bias=True):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, bias=bias)
        self.group_norm = nn.GroupNorm(num_groups, out_channels)

    def forward(self, x):
        x = self.conv(x)
        x = F.hardswish(x)
        x = self.group_norm(x)
        x = torch.mean(x, dim=[2, 3, 4])
        return x


batch_size = 1024
in_channels = 3
out_channels = 16
depth = 16
height = 32
width = 32
kernel_size = 4


def get_inputs():
    return [torch.rand(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
