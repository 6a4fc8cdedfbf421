# Calibration candidate generated from problems/level1/46_Average_Pooling_3D.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""3D average pooling with stride and padding."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Applies nn.AvgPool3d to a (N, C, D, H, W) tensor."""

    def __init__(self, kernel_size: int, stride: int | None = None, padding: int = 0):
        super().__init__()
        self.avg_pool = nn.AvgPool3d(kernel_size=kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.avg_pool(x)


batch_size = 2
channels = 32
depth = 128
height = 128
width = 128
kernel_size = 3
stride = 2
padding = 1


def get_inputs():
    x = torch.randn(batch_size, channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [kernel_size, stride, padding]
