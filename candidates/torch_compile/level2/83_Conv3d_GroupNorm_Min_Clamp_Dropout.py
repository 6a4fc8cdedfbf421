# Generated from problems/level2/83_Conv3d_GroupNorm_Min_Clamp_Dropout.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""3D convolution, group normalization, elementwise minimum, clamp, then dropout."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Conv3d -> GroupNorm -> min(x, max_value) -> clamp(min_value, max_value) -> Dropout.

    Dropout has p=0, which keeps the output deterministic in train and eval mode.
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int,
        groups: int,
        min_value: float,
        max_value: float,
        dropout_p: float,
    ):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.norm = nn.GroupNorm(groups, out_channels)
        self.dropout = nn.Dropout(dropout_p)
        self.min_value = min_value
        self.max_value = max_value

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = self.norm(x)
        x = torch.min(x, x.new_tensor(self.max_value))
        x = torch.clamp(x, min=self.min_value, max=self.max_value)
        return self.dropout(x)


batch_size = 128
in_channels = 3
out_channels = 16
depth = 16
height = 64
width = 64
kernel_size = 3
groups = 8
min_value = 0.0
max_value = 1.0
dropout_p = 0.0


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, groups, min_value, max_value, dropout_p]


class ModelNew(nn.Module):
    """The problem's own Model under torch.compile: built with the same arguments, so it draws
    the same weights, and compiled at its first call."""

    def __init__(self, *args):
        super().__init__()
        self.compiled = torch.compile(Model(*args))

    def forward(self, *inputs):
        return self.compiled(*inputs)
