# Generated from problems/level2/64_Gemm_LogSumExp_LeakyReLU_LeakyReLU_GELU_GELU.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""Linear layer, logsumexp over features, two LeakyReLUs, then two GELUs."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Gemm -> logsumexp(dim=1) -> LeakyReLU -> LeakyReLU -> GELU -> GELU."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.linear(x)
        x = torch.logsumexp(x, dim=1, keepdim=True)
        x = torch.nn.functional.leaky_relu(x, negative_slope=0.01)
        x = torch.nn.functional.leaky_relu(x, negative_slope=0.01)
        x = torch.nn.functional.gelu(x)
        return torch.nn.functional.gelu(x)


batch_size = 1024
in_features = 8192
out_features = 8192


def get_inputs():
    # Scaled so the logsumexp follows the largest logits and varies from row to row
    # instead of sitting near log(out_features) for every row.
    return [torch.randn(batch_size, in_features) * 10]


def get_init_inputs():
    return [in_features, out_features]


class ModelNew(nn.Module):
    """The problem's own Model under torch.compile: built with the same arguments, so it draws
    the same weights, and compiled at its first call."""

    def __init__(self, *args):
        super().__init__()
        self.compiled = torch.compile(Model(*args))

    def forward(self, *inputs):
        return self.compiled(*inputs)
