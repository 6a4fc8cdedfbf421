# Calibration candidate generated from problems/level2/40_Matmul_Scaling_ResidualAdd.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Linear layer, scaling, then a residual add of the unscaled result."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Linear -> scale -> add the (detached) linear output back."""

    def __init__(self, in_features, out_features, scaling_factor):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        x = self.matmul(x)
        original_x = x.clone().detach()
        x = x * self.scaling_factor
        x = x + original_x
        return x


batch_size = 16384
in_features = 4096
out_features = 4096
scaling_factor = 0.5


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, scaling_factor]
