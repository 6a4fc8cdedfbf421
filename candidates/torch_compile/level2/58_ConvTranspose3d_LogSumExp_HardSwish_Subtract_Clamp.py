# Generated from problems/level2/58_ConvTranspose3d_LogSumExp_HardSwish_Subtract_Clamp.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""3D transposed conv, logsumexp over channels, hard-swish, subtract a bias, clamp to [-3, 3]."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """ConvTranspose3d -> logsumexp(dim=1) -> x * sigmoid(x + 3) / 6 -> subtract bias -> clamp."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int,
        stride: int,
        padding: int,
        bias_shape,
    ):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(
            in_channels, out_channels, kernel_size, stride=stride, padding=padding
        )
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv_transpose(x)
        x = torch.logsumexp(x, dim=1, keepdim=True)
        x = x * torch.sigmoid(x + 3) / 6
        x = x - self.bias
        return torch.clamp(x, min=-3, max=3)


batch_size = 128
in_channels = 3
out_channels = 16
depth = 16
height = 32
width = 32
kernel_size = 3
stride = 2
padding = 1
bias_shape = (1, 1, 1, 1)


def get_inputs():
    # Scaled so the channel logsumexp varies across positions instead of staying
    # near log(out_channels) everywhere.
    return [torch.randn(batch_size, in_channels, depth, height, width) * 30]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, bias_shape]


class ModelNew(nn.Module):
    """The problem's own Model under torch.compile: built with the same arguments, so it draws
    the same weights, and compiled at its first call."""

    def __init__(self, *args):
        super().__init__()
        self.compiled = torch.compile(Model(*args))

    def forward(self, *inputs):
        return self.compiled(*inputs)
