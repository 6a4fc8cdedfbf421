# Calibration candidate generated from problems/level2/79_Conv3d_Multiply_InstanceNorm_Clamp_Multiply_Max.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""3D convolution, per-channel multiply, instance norm, clamp, multiply again, max over channels."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Conv3d -> x * multiplier -> InstanceNorm3d -> clamp -> x * multiplier -> channel max."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int,
        multiplier_shape,
        clamp_min: float,
        clamp_max: float,
    ):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.multiplier = nn.Parameter(torch.randn(multiplier_shape))
        self.instance_norm = nn.InstanceNorm3d(out_channels)
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = x * self.multiplier
        x = self.instance_norm(x)
        x = torch.clamp(x, self.clamp_min, self.clamp_max)
        x = x * self.multiplier
        return torch.max(x, dim=1)[0]


batch_size = 128
in_channels = 3
out_channels = 16
depth = 16
height = 32
width = 32
kernel_size = 3
multiplier_shape = (out_channels, 1, 1, 1)
clamp_min = -1.0
clamp_max = 1.0


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, multiplier_shape, clamp_min, clamp_max]
