# Calibration candidate generated from problems/level2/25_Conv2d_Min_Tanh_Tanh.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""2D convolution, min over channels, then two tanh activations."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Conv2d -> min over channels (kept) -> tanh -> tanh."""

    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        x = self.conv(x)
        x = torch.min(x, dim=1, keepdim=True)[0]
        x = torch.tanh(x)
        x = torch.tanh(x)
        return x


batch_size = 128
in_channels = 16
out_channels = 64
height = 256
width = 256
kernel_size = 3


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
