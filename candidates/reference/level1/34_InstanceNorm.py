# Calibration candidate generated from problems/level1/34_InstanceNorm.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""2D instance normalization of a (N, C, H, W) tensor."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Applies nn.InstanceNorm2d (per-sample, per-channel statistics, no affine)."""

    def __init__(self, num_features: int):
        super().__init__()
        self.inorm = nn.InstanceNorm2d(num_features=num_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.inorm(x)


batch_size = 7
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
