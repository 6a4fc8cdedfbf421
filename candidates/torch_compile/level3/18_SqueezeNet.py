# Generated from problems/level3/18_SqueezeNet.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""SqueezeNet classifier on 512x512 RGB images."""

import torch
import torch.nn as nn


class FireModule(nn.Module):
    """squeeze 1x1 conv -> ReLU, then [1x1 conv -> ReLU, 3x3 conv -> ReLU] concatenated."""

    def __init__(self, in_channels, squeeze_channels, expand1x1_channels, expand3x3_channels):
        super().__init__()
        self.squeeze = nn.Conv2d(in_channels, squeeze_channels, kernel_size=1)
        self.squeeze_activation = nn.ReLU(inplace=True)
        self.expand1x1 = nn.Conv2d(squeeze_channels, expand1x1_channels, kernel_size=1)
        self.expand1x1_activation = nn.ReLU(inplace=True)
        self.expand3x3 = nn.Conv2d(squeeze_channels, expand3x3_channels, kernel_size=3, padding=1)
        self.expand3x3_activation = nn.ReLU(inplace=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.squeeze_activation(self.squeeze(x))
        return torch.cat(
            [
                self.expand1x1_activation(self.expand1x1(x)),
                self.expand3x3_activation(self.expand3x3(x)),
            ],
            1,
        )


class Model(nn.Module):
    """Conv7x7/ReLU/MaxPool stem, eight Fire modules with max-pooling between groups, then a
    (p=0) dropout, 1x1 conv classifier, ReLU and global average pooling."""

    def __init__(self, num_classes=1000):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 96, kernel_size=7, stride=2),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True),
            FireModule(96, 16, 64, 64),
            FireModule(128, 16, 64, 64),
            FireModule(128, 32, 128, 128),
            nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True),
            FireModule(256, 32, 128, 128),
            FireModule(256, 48, 192, 192),
            FireModule(384, 48, 192, 192),
            FireModule(384, 64, 256, 256),
            nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True),
            FireModule(512, 64, 256, 256),
        )
        self.classifier = nn.Sequential(
            nn.Dropout(p=0.0),
            nn.Conv2d(512, num_classes, kernel_size=1),
            nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d((1, 1)),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.features(x)
        x = self.classifier(x)
        return torch.flatten(x, 1)


batch_size = 64
input_channels = 3
height = 512
width = 512
num_classes = 1000
input_scale = 1.0e6


def get_inputs():
    # A gain and an offset per image and channel: from i.i.d. noise alone the global average
    # pool sees the same statistics in every draw. The scale lifts the signal above the biases,
    # which otherwise dominate after eighteen default-initialised convolutions.
    gain = torch.exp(torch.randn(batch_size, input_channels, 1, 1))
    offset = torch.randn(batch_size, input_channels, 1, 1)
    noise = torch.randn(batch_size, input_channels, height, width)
    return [(noise * gain + offset) * input_scale]


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
