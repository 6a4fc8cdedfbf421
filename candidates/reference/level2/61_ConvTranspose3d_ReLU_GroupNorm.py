# Calibration candidate generated from problems/level2/61_ConvTranspose3d_ReLU_GroupNorm.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""3D transposed convolution without bias, ReLU, then group normalization."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """ConvTranspose3d -> ReLU -> GroupNorm."""

    def __init__(
        self, in_channels: int, out_channels: int, kernel_size: int, groups: int, bias: bool = False
    ):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, bias=bias)
        self.relu = nn.ReLU()
        self.group_norm = nn.GroupNorm(num_groups=groups, num_channels=out_channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv_transpose(x)
        x = self.relu(x)
        return self.group_norm(x)


batch_size = 16
in_channels = 64
out_channels = 128
D = 32
H = 32
W = 32
kernel_size = 3
groups = 8
bias = False


def get_inputs():
    return [torch.randn(batch_size, in_channels, D, H, W)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, groups, bias]
