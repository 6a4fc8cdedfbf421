# Calibration candidate generated from problems/level2/88_Gemm_GroupNorm_Swish_Multiply_Swish.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Linear layer, group normalization, Swish, multiply by a learned vector, Swish."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Gemm -> GroupNorm -> Swish -> multiply by a per-feature parameter -> Swish."""

    def __init__(self, in_features: int, out_features: int, num_groups: int, multiply_weight_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.group_norm = nn.GroupNorm(num_groups, out_features)
        self.multiply_weight = nn.Parameter(torch.randn(multiply_weight_shape))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.gemm(x)
        x = self.group_norm(x)
        x = x * torch.sigmoid(x)
        x = x * self.multiply_weight
        return x * torch.sigmoid(x)


batch_size = 1024
in_features = 8192
out_features = 8192
num_groups = 256
multiply_weight_shape = (out_features,)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, num_groups, multiply_weight_shape]
