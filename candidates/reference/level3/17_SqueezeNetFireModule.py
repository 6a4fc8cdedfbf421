# Calibration candidate generated from problems/level3/17_SqueezeNetFireModule.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""SqueezeNet Fire module: 1x1 squeeze conv, then parallel 1x1 and 3x3 expand convs concatenated."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """squeeze 1x1 Conv2d -> ReLU, then [1x1 Conv2d -> ReLU, 3x3 Conv2d -> ReLU] concatenated
    along channels."""

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


batch_size = 16
num_input_features = 3
num_output_features = 64
height = 256
width = 256
squeeze_channels = 6
expand1x1_channels = 64
expand3x3_channels = 64


def get_inputs():
    return [torch.randn(batch_size, num_input_features, height, width)]


def get_init_inputs():
    return [num_input_features, squeeze_channels, expand1x1_channels, expand3x3_channels]
