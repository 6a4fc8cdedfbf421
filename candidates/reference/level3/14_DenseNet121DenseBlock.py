# Calibration candidate generated from problems/level3/14_DenseNet121DenseBlock.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""DenseNet dense block: each layer's output is concatenated onto all previous features."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """num_layers x (BatchNorm2d -> ReLU -> 3x3 Conv2d -> Dropout(p=0)), each fed the
    channel-concatenation of the input and all earlier layer outputs."""

    def __init__(self, num_layers: int, num_input_features: int, growth_rate: int):
        super().__init__()
        layers = []
        for i in range(num_layers):
            layers.append(self._make_layer(num_input_features + i * growth_rate, growth_rate))
        self.layers = nn.ModuleList(layers)

    def _make_layer(self, in_features: int, growth_rate: int):
        return nn.Sequential(
            nn.BatchNorm2d(in_features),
            nn.ReLU(inplace=True),
            nn.Conv2d(in_features, growth_rate, kernel_size=3, padding=1, bias=False),
            nn.Dropout(0.0),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        features = [x]
        for layer in self.layers:
            new_feature = layer(x)
            features.append(new_feature)
            x = torch.cat(features, 1)
        return x


batch_size = 10
num_layers = 6
num_input_features = 32
growth_rate = 32
height = 224
width = 224


def get_inputs():
    return [torch.randn(batch_size, num_input_features, height, width)]


def get_init_inputs():
    return [num_layers, num_input_features, growth_rate]
