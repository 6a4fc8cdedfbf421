# Calibration candidate generated from problems/level2/55_Matmul_MaxPool_Sum_Scale.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Linear layer, 1D max pooling over features, sum over features, then scale."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Matmul -> MaxPool1d over the feature axis -> sum over features -> multiply by a scalar."""

    def __init__(self, in_features: int, out_features: int, kernel_size: int, scale_factor: float):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.max_pool = nn.MaxPool1d(kernel_size)
        self.scale_factor = scale_factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.matmul(x)
        x = self.max_pool(x.unsqueeze(1)).squeeze(1)
        x = torch.sum(x, dim=1)
        return x * self.scale_factor


batch_size = 128
in_features = 32768
out_features = 16384
kernel_size = 2
scale_factor = 0.5


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, kernel_size, scale_factor]
