# Calibration candidate generated from problems/level2/28_BMM_InstanceNorm_Sum_ResidualAdd_Multiply.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Linear layer, instance norm over features, then add and multiply by a second input."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Linear -> InstanceNorm2d over the feature row -> add y -> multiply by y."""

    def __init__(self, in_features, out_features, eps=1e-5, momentum=0.1):
        super().__init__()
        self.bmm = nn.Linear(in_features, out_features)
        self.instance_norm = nn.InstanceNorm2d(out_features, eps=eps, momentum=momentum)

    def forward(self, x, y):
        x = self.bmm(x)
        x = self.instance_norm(x.unsqueeze(1).unsqueeze(1)).squeeze(1).squeeze(1)
        x = x + y
        x = x * y
        return x


batch_size = 1024
in_features = 8192
out_features = 8192


def get_inputs():
    return [torch.rand(batch_size, in_features), torch.rand(batch_size, out_features)]


def get_init_inputs():
    return [in_features, out_features]
