# Calibration candidate generated from problems/level2/6_Conv3d_Softmax_MaxPool_MaxPool.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""3D convolution, channel softmax, then two 3D max-pooling layers."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Conv3d -> softmax over channels -> MaxPool3d -> MaxPool3d."""

    def __init__(self, in_channels, out_channels, kernel_size, pool_kernel_size):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.pool1 = nn.MaxPool3d(pool_kernel_size)
        self.pool2 = nn.MaxPool3d(pool_kernel_size)

    def forward(self, x):
        x = self.conv(x)
        x = torch.softmax(x, dim=1)
        x = self.pool1(x)
        x = self.pool2(x)
        return x


batch_size = 128
in_channels = 3
out_channels = 16
depth = 16
height = 32
width = 32
kernel_size = 3
pool_kernel_size = 2


def get_inputs():
    return [torch.rand(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, pool_kernel_size]
