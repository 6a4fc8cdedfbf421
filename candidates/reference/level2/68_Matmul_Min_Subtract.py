# Calibration candidate generated from problems/level2/68_Matmul_Min_Subtract.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Linear layer, elementwise minimum with a learned scalar, then subtract that scalar."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Matmul -> min(x, constant) -> x - constant, with constant a scalar parameter."""

    def __init__(self, in_features: int, out_features: int, constant: float):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.constant = nn.Parameter(torch.tensor(constant))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.linear(x)
        x = torch.min(x, self.constant)
        return x - self.constant


batch_size = 128
in_features = 16384
out_features = 16384
constant = 2.0


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, constant]
