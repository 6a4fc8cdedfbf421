# Calibration candidate generated from problems/level2/51_Gemm_Subtract_GlobalAvgPool_LogSumExp_GELU_ResidualAdd.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Linear layer, subtract a learned vector, feature mean, logsumexp, GELU, add the input back."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Gemm -> subtract parameter -> mean over features -> logsumexp -> GELU -> residual add."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=bias)
        self.subtract = nn.Parameter(torch.randn(out_features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        original_x = x.clone().detach()
        x = self.gemm(x)
        x = x - self.subtract
        x = torch.mean(x, dim=1, keepdim=True)
        x = torch.logsumexp(x, dim=1, keepdim=True)
        x = torch.nn.functional.gelu(x)
        return x + original_x


batch_size = 2048
in_features = 8192
out_features = 8192


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
