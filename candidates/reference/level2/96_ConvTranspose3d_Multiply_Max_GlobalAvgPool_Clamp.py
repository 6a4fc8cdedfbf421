# Calibration candidate generated from problems/level2/96_ConvTranspose3d_Multiply_Max_GlobalAvgPool_Clamp.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""3D transposed convolution, scale, max pooling, global average pooling, then clamp to [0, 1]."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """ConvTranspose3d -> scale -> MaxPool3d -> AdaptiveAvgPool3d(1) -> clamp(0, 1)."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int,
        stride: int,
        padding: int,
        scale: float,
        maxpool_kernel_size: int,
    ):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(
            in_channels, out_channels, kernel_size, stride=stride, padding=padding
        )
        self.scale = scale
        self.maxpool = nn.MaxPool3d(kernel_size=maxpool_kernel_size)
        self.global_avg_pool = nn.AdaptiveAvgPool3d((1, 1, 1))
        self.clamp_min = 0
        self.clamp_max = 1

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv_transpose(x)
        x = x * self.scale
        x = self.maxpool(x)
        x = self.global_avg_pool(x)
        return torch.clamp(x, min=self.clamp_min, max=self.clamp_max)


batch_size = 128
in_channels = 3
out_channels = 16
depth = 16
height = 32
width = 32
kernel_size = 3
stride = 2
padding = 1
scale = 0.5
maxpool_kernel_size = 2


def get_inputs():
    # A per-(sample, channel) offset: the global average this chain ends in then depends on
    # the input (with N(0,1) alone every sample gave nearly the same output).
    offset = 2 * torch.randn(batch_size, in_channels, 1, 1, 1)
    return [torch.randn(batch_size, in_channels, depth, height, width) + offset]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, scale, maxpool_kernel_size]
