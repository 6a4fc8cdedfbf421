# Calibration candidate generated from problems/level1/44_Average_Pooling_1D.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""1D average pooling with padding."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Applies nn.AvgPool1d to a (N, C, L) tensor."""

    def __init__(self, kernel_size: int, stride: int = 1, padding: int = 0):
        super().__init__()
        self.avg_pool = nn.AvgPool1d(kernel_size=kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.avg_pool(x)


batch_size = 64
in_channels = 128
input_length = 8192
kernel_size = 8
stride = 1
padding = 4


def get_inputs():
    x = torch.randn(batch_size, in_channels, input_length)
    return [x]


def get_init_inputs():
    return [kernel_size, stride, padding]
