# Calibration candidate generated from problems/level2/81_Gemm_Swish_Divide_Clamp_Tanh_Clamp.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Linear layer, Swish, divide by 2, clamp, tanh, clamp."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Gemm -> Swish -> / 2 -> clamp(-1, 1) -> tanh -> clamp(-1, 1)."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.gemm(x)
        x = x * torch.sigmoid(x)
        x = x / 2.0
        x = torch.clamp(x, min=-1.0, max=1.0)
        x = torch.tanh(x)
        return torch.clamp(x, min=-1.0, max=1.0)


batch_size = 1024
in_features = 8192
out_features = 8192


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
