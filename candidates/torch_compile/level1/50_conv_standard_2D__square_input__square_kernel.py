# Generated from problems/level1/50_conv_standard_2D__square_input__square_kernel.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""Standard 2D convolution (AlexNet first layer: 3->96 channels, 11x11 kernel, stride 4)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Single nn.Conv2d with a large square kernel on 224x224 RGB images."""

    def __init__(self, num_classes: int = 1000):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels=3, out_channels=96, kernel_size=11, stride=4, padding=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv1(x)


batch_size = 256
num_classes = 1000


def get_inputs():
    x = torch.randn(batch_size, 3, 224, 224)
    return [x]


def get_init_inputs():
    return [num_classes]


class ModelNew(nn.Module):
    """The problem's own Model under torch.compile: built with the same arguments, so it draws
    the same weights, and compiled at its first call."""

    def __init__(self, *args):
        super().__init__()
        self.compiled = torch.compile(Model(*args))

    def forward(self, *inputs):
        return self.compiled(*inputs)
