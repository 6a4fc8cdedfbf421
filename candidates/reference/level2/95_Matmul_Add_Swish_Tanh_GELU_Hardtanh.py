# Calibration candidate generated from problems/level2/95_Matmul_Add_Swish_Tanh_GELU_Hardtanh.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Linear layer, add a learned vector, Swish, tanh, GELU, then Hardtanh."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Matmul -> add parameter -> Swish -> tanh -> GELU -> Hardtanh(-1, 1)."""

    def __init__(self, in_features: int, out_features: int, add_value_shape):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.add_value = nn.Parameter(torch.randn(add_value_shape) * 0.02)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.matmul(x)
        x = x + self.add_value
        x = torch.sigmoid(x) * x
        x = torch.tanh(x)
        x = torch.nn.functional.gelu(x)
        return torch.nn.functional.hardtanh(x, min_val=-1, max_val=1)


batch_size = 1024
in_features = 8192
out_features = 8192
add_value_shape = (out_features,)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, add_value_shape]
