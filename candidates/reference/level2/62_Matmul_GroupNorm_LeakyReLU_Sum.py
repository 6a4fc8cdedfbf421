# Calibration candidate generated from problems/level2/62_Matmul_GroupNorm_LeakyReLU_Sum.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Linear layer, group normalization, LeakyReLU, then add the result to itself."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Matmul -> GroupNorm -> LeakyReLU -> x + x."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_groups: int,
        eps: float = 1e-5,
        negative_slope: float = 0.01,
    ):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)
        self.gn = nn.GroupNorm(num_groups=num_groups, num_channels=hidden_size, eps=eps)
        self.leaky_relu = nn.LeakyReLU(negative_slope=negative_slope)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.fc(x)
        x = self.gn(x)
        x = self.leaky_relu(x)
        return x + x


batch_size = 1024
input_size = 8192
hidden_size = 8192
num_groups = 512


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, num_groups]
