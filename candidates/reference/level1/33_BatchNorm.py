# Calibration candidate generated from problems/level1/33_BatchNorm.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""2D batch normalization of a (N, C, H, W) tensor."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Applies nn.BatchNorm2d; its running statistics start from fixed non-trivial values."""

    def __init__(self, num_features: int):
        super().__init__()
        self.bn = nn.BatchNorm2d(num_features=num_features)
        with torch.no_grad():
            self.bn.running_mean.copy_(torch.linspace(-1.0, 1.0, num_features))
            self.bn.running_var.copy_(torch.linspace(0.25, 4.0, num_features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bn(x)


batch_size = 8
features = 64
dim1 = 512
dim2 = 512


def get_inputs():
    scale = torch.rand(batch_size, features, 1, 1) * 1.5 + 0.5
    shift = torch.randn(batch_size, features, 1, 1)
    x = torch.randn(batch_size, features, dim1, dim2) * scale + shift
    return [x]


def get_init_inputs():
    return [features]
