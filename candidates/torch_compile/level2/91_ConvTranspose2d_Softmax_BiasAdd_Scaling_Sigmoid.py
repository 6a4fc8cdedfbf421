# Generated from problems/level2/91_ConvTranspose2d_Softmax_BiasAdd_Scaling_Sigmoid.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""2D transposed convolution, channel softmax, add a learned bias, scale, then sigmoid."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """ConvTranspose2d -> softmax(dim=1) -> add a (C, 1, 1) bias -> scale -> sigmoid."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int,
        stride: int,
        padding: int,
        output_padding: int,
        bias_shape,
        scaling_factor: float,
    ):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose2d(
            in_channels,
            out_channels,
            kernel_size,
            stride=stride,
            padding=padding,
            output_padding=output_padding,
        )
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.scaling_factor = scaling_factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv_transpose(x)
        x = torch.softmax(x, dim=1)
        x = x + self.bias
        x = x * self.scaling_factor
        return torch.sigmoid(x)


batch_size = 128
in_channels = 64
out_channels = 128
height = 64
width = 64
kernel_size = 4
stride = 2
padding = 1
output_padding = 1
bias_shape = (out_channels, 1, 1)
scaling_factor = 2.0


def get_inputs():
    # Scaled so the channel softmax is peaked: at 1/out_channels everywhere its
    # contribution would sit below the tolerance, next to the learned bias.
    return [torch.randn(batch_size, in_channels, height, width) * 10]


def get_init_inputs():
    return [
        in_channels,
        out_channels,
        kernel_size,
        stride,
        padding,
        output_padding,
        bias_shape,
        scaling_factor,
    ]


class ModelNew(nn.Module):
    """The problem's own Model under torch.compile: built with the same arguments, so it draws
    the same weights, and compiled at its first call."""

    def __init__(self, *args):
        super().__init__()
        self.compiled = torch.compile(Model(*args))

    def forward(self, *inputs):
        return self.compiled(*inputs)
