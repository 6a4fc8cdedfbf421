# Calibration candidate generated from problems/level2/89_ConvTranspose3d_MaxPool_Softmax_Subtract_Swish_Max.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""3D transposed conv, max pooling, channel softmax, subtract a vector, Swish, channel max."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """ConvTranspose3d -> MaxPool3d -> softmax(dim=1) -> subtract -> Swish -> max(dim=1)."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int,
        stride: int,
        padding: int,
        output_padding: int,
        pool_kernel_size: int,
        pool_stride: int,
        pool_padding: int,
    ):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(
            in_channels,
            out_channels,
            kernel_size,
            stride=stride,
            padding=padding,
            output_padding=output_padding,
        )
        self.max_pool = nn.MaxPool3d(
            kernel_size=pool_kernel_size, stride=pool_stride, padding=pool_padding
        )
        self.subtract = nn.Parameter(torch.randn(out_channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv_transpose(x)
        x = self.max_pool(x)
        x = torch.softmax(x, dim=1)
        x = x - self.subtract.view(1, -1, 1, 1, 1)
        x = torch.sigmoid(x) * x
        return torch.max(x, dim=1)[0]


batch_size = 128
in_channels = 3
out_channels = 16
depth = 16
height = 32
width = 32
kernel_size = 3
stride = 2
padding = 1
output_padding = 1
pool_kernel_size = 2
pool_stride = 2
pool_padding = 0


def get_inputs():
    # Scaled so the channel softmax is far from uniform and the output tracks the input.
    return [torch.randn(batch_size, in_channels, depth, height, width) * 10]


def get_init_inputs():
    return [
        in_channels,
        out_channels,
        kernel_size,
        stride,
        padding,
        output_padding,
        pool_kernel_size,
        pool_stride,
        pool_padding,
    ]
