# Generated from problems/level2/92_Conv2d_GroupNorm_Tanh_HardSwish_ResidualAdd_LogSumExp.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""2D conv, group norm, tanh, HardSwish, add the conv output back, logsumexp over channels."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Conv2d -> GroupNorm -> Tanh -> HardSwish -> add the conv output -> logsumexp(dim=1)."""

    def __init__(
        self, in_channels: int, out_channels: int, kernel_size: int, groups: int, eps: float = 1e-5
    ):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.group_norm = nn.GroupNorm(groups, out_channels, eps=eps)
        self.tanh = nn.Tanh()
        self.hard_swish = nn.Hardswish()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x_conv = self.conv(x)
        x_norm = self.group_norm(x_conv)
        x_tanh = self.tanh(x_norm)
        x_hard_swish = self.hard_swish(x_tanh)
        x_res = x_conv + x_hard_swish
        return torch.logsumexp(x_res, dim=1, keepdim=True)


batch_size = 128
in_channels = 8
out_channels = 64
height = 128
width = 128
kernel_size = 3
groups = 16


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, groups]


class ModelNew(nn.Module):
    """The problem's own Model under torch.compile: built with the same arguments, so it draws
    the same weights, and compiled at its first call."""

    def __init__(self, *args):
        super().__init__()
        self.compiled = torch.compile(Model(*args))

    def forward(self, *inputs):
        return self.compiled(*inputs)
