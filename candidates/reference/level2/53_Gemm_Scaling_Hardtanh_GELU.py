# Calibration candidate generated from problems/level2/53_Gemm_Scaling_Hardtanh_GELU.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Linear layer, scale, Hardtanh, then GELU."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Gemm -> multiply by a scalar -> Hardtanh(min, max) -> GELU."""

    def __init__(
        self,
        in_features: int,
        out_features: int,
        scaling_factor: float,
        hardtanh_min: float,
        hardtanh_max: float,
    ):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.scaling_factor = scaling_factor
        self.hardtanh = nn.Hardtanh(min_val=hardtanh_min, max_val=hardtanh_max)
        self.gelu = nn.GELU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.gemm(x)
        x = x * self.scaling_factor
        x = self.hardtanh(x)
        return self.gelu(x)


batch_size = 2048
in_features = 8192
out_features = 8192
scaling_factor = 0.5
hardtanh_min = -2
hardtanh_max = 2


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, scaling_factor, hardtanh_min, hardtanh_max]
