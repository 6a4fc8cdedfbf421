# Generated from problems/level2/77_ConvTranspose3d_Scale_BatchNorm_GlobalAvgPool.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""3D transposed convolution, scale, batch normalization, then global average pooling."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """ConvTranspose3d -> multiply by a scalar -> BatchNorm3d -> AdaptiveAvgPool3d(1)."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int,
        scale_factor: float,
        eps: float = 1e-5,
        momentum: float = 0.1,
    ):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size)
        self.scale_factor = scale_factor
        self.batch_norm = nn.BatchNorm3d(out_channels, eps=eps, momentum=momentum)
        self.global_avg_pool = nn.AdaptiveAvgPool3d((1, 1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv_transpose(x)
        x = x * self.scale_factor
        x = self.batch_norm(x)
        return self.global_avg_pool(x)


batch_size = 16
in_channels = 64
out_channels = 128
depth = 16
height = 32
width = 32
kernel_size = 5
scale_factor = 2.0


def get_inputs():
    # A random offset per sample and channel: zero-mean noise averages out under the
    # global pooling, the offsets carry a per-sample signal well above the tolerance.
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x + torch.randn(batch_size, in_channels, 1, 1, 1)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, scale_factor]


class ModelNew(nn.Module):
    """The problem's own Model under torch.compile: built with the same arguments, so it draws
    the same weights, and compiled at its first call."""

    def __init__(self, *args):
        super().__init__()
        self.compiled = torch.compile(Model(*args))

    def forward(self, *inputs):
        return self.compiled(*inputs)
