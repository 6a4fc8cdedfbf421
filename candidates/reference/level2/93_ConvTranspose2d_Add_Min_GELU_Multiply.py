# Calibration candidate generated from problems/level2/93_ConvTranspose2d_Add_Min_GELU_Multiply.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""2D transposed convolution, add a constant, minimum with zero, GELU, multiply by a constant."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """ConvTranspose2d -> + add_value -> min(x, 0) -> GELU -> * multiply_value."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int,
        stride: int,
        add_value: float,
        multiply_value: float,
    ):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose2d(
            in_channels, out_channels, kernel_size, stride=stride
        )
        self.add_value = add_value
        self.multiply_value = multiply_value

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv_transpose(x)
        x = x + self.add_value
        x = torch.min(x, x.new_tensor(0.0))
        x = torch.nn.functional.gelu(x)
        return x * self.multiply_value


batch_size = 128
in_channels = 64
out_channels = 128
height = 64
width = 64
kernel_size = 4
stride = 2
add_value = 0.5
multiply_value = 2.0


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, add_value, multiply_value]
