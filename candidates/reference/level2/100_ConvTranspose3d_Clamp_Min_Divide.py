# Calibration candidate generated from problems/level2/100_ConvTranspose3d_Clamp_Min_Divide.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""3D transposed convolution, clamp from below, then divide by a constant."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """ConvTranspose3d -> clamp(min=min_value) -> divide by a scalar."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int,
        stride: int,
        padding: int,
        min_value: float,
        divisor: float,
    ):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(
            in_channels, out_channels, kernel_size, stride=stride, padding=padding
        )
        self.min_value = min_value
        self.divisor = divisor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv_transpose(x)
        x = torch.clamp(x, min=self.min_value)
        return x / self.divisor


batch_size = 4
in_channels = 64
out_channels = 128
depth = 24
height = 48
width = 48
kernel_size = 3
stride = 2
padding = 1
min_value = -1.0
divisor = 2.0


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, min_value, divisor]
