# Calibration candidate generated from problems/level2/86_Matmul_Divide_GELU.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Linear layer, divide by a constant, then GELU."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Matmul -> divide by a scalar -> GELU."""

    def __init__(self, input_size: int, output_size: int, divisor: float):
        super().__init__()
        self.linear = nn.Linear(input_size, output_size)
        self.divisor = divisor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.linear(x)
        x = x / self.divisor
        return torch.nn.functional.gelu(x)


batch_size = 1024
input_size = 8192
output_size = 8192
divisor = 10.0


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, output_size, divisor]
