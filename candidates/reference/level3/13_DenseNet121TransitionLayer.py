# Calibration candidate generated from problems/level3/13_DenseNet121TransitionLayer.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""DenseNet transition layer: BatchNorm, ReLU, 1x1 conv and 2x2 average pooling."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """BatchNorm2d -> ReLU -> 1x1 Conv2d (no bias) -> AvgPool2d(2, stride 2)."""

    def __init__(self, num_input_features: int, num_output_features: int):
        super().__init__()
        self.transition = nn.Sequential(
            nn.BatchNorm2d(num_input_features),
            nn.ReLU(inplace=True),
            nn.Conv2d(num_input_features, num_output_features, kernel_size=1, bias=False),
            nn.AvgPool2d(kernel_size=2, stride=2),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.transition(x)


batch_size = 128
num_input_features = 32
num_output_features = 64
height = 256
width = 256


def get_inputs():
    return [torch.randn(batch_size, num_input_features, height, width)]


def get_init_inputs():
    return [num_input_features, num_output_features]
