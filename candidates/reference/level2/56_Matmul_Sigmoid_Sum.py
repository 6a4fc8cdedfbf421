# Calibration candidate generated from problems/level2/56_Matmul_Sigmoid_Sum.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Linear layer, sigmoid, then sum over the hidden dimension."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Matmul -> sigmoid -> sum over features (keepdim)."""

    def __init__(self, input_size: int, hidden_size: int):
        super().__init__()
        self.linear = nn.Linear(input_size, hidden_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.linear(x)
        x = torch.sigmoid(x)
        return torch.sum(x, dim=1, keepdim=True)


batch_size = 128
input_size = 32768
hidden_size = 16384


def get_inputs():
    # Scaled so most sigmoids saturate: the row sums then spread far enough around
    # hidden_size / 2 that no single constant lies within tolerance of every row.
    return [torch.randn(batch_size, input_size) * 10]


def get_init_inputs():
    return [input_size, hidden_size]
