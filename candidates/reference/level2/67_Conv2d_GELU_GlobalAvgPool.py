# Calibration candidate generated from problems/level2/67_Conv2d_GELU_GlobalAvgPool.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""2D convolution, GELU, then global average pooling to one value per channel."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Conv2d -> GELU -> adaptive_avg_pool2d(1) -> squeeze to (N, C)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = torch.nn.functional.gelu(x)
        x = torch.nn.functional.adaptive_avg_pool2d(x, 1)
        return x.squeeze(-1).squeeze(-1)


batch_size = 128
in_channels = 8
out_channels = 64
height = 256
width = 256
kernel_size = 3


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
