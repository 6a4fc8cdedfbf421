# Calibration candidate generated from problems/level2/72_ConvTranspose3d_BatchNorm_AvgPool_AvgPool.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""3D transposed convolution, batch normalization, then two 2x2x2 average poolings."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """ConvTranspose3d -> BatchNorm3d -> AvgPool3d(2) -> AvgPool3d(2).

    bias_shape is accepted for signature compatibility and not used.
    """

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
        self.batch_norm = nn.BatchNorm3d(out_channels)
        self.avg_pool1 = nn.AvgPool3d(kernel_size=2)
        self.avg_pool2 = nn.AvgPool3d(kernel_size=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv_transpose(x)
        x = self.batch_norm(x)
        x = self.avg_pool1(x)
        return self.avg_pool2(x)


batch_size = 64
in_channels = 3
out_channels = 16
depth = 32
height = 32
width = 32
kernel_size = 3
stride = 2
padding = 1
bias_shape = (out_channels, 1, 1, 1)


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, bias_shape]
