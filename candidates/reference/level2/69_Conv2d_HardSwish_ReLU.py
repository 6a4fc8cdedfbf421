# Calibration candidate generated from problems/level2/69_Conv2d_HardSwish_ReLU.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""2D convolution, HardSwish, then ReLU."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Conv2d -> HardSwish -> ReLU."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = torch.nn.functional.hardswish(x)
        return torch.relu(x)


batch_size = 128
in_channels = 8
out_channels = 64
height = 128
width = 128
kernel_size = 3


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
