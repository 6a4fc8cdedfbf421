# Calibration candidate generated from problems/level2/60_ConvTranspose3d_Swish_GroupNorm_HardSwish.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""3D transposed convolution, Swish, group normalization, then HardSwish."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """ConvTranspose3d -> Swish -> GroupNorm -> HardSwish."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int,
        stride: int,
        padding: int,
        groups: int,
        eps: float,
        bias: bool = True,
    ):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(
            in_channels, out_channels, kernel_size, stride=stride, padding=padding, bias=bias
        )
        self.group_norm = nn.GroupNorm(num_groups=groups, num_channels=out_channels, eps=eps)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv_transpose(x)
        x = torch.sigmoid(x) * x
        x = self.group_norm(x)
        return torch.nn.functional.hardswish(x)


batch_size = 128
in_channels = 3
out_channels = 16
depth = 16
height = 32
width = 32
kernel_size = 3
stride = 2
padding = 1
groups = 4
eps = 1e-5


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, groups, eps]
