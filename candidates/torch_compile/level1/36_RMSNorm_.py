# Generated from problems/level1/36_RMSNorm_.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""RMS normalization over the channel dimension of a (N, C, H, W) tensor."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Divides x by the root mean square of x over dim 1 (plus eps)."""

    def __init__(self, num_features: int, eps: float = 1e-5):
        super().__init__()
        self.num_features = num_features
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rms = torch.sqrt(torch.mean(x ** 2, dim=1, keepdim=True) + self.eps)
        return x / rms


batch_size = 7
features = 64
dim1 = 512
dim2 = 512


def get_inputs():
    x = torch.randn(batch_size, features, dim1, dim2)
    return [x]


def get_init_inputs():
    return [features]


class ModelNew(nn.Module):
    """The problem's own Model under torch.compile: built with the same arguments, so it draws
    the same weights, and compiled at its first call."""

    def __init__(self, *args):
        super().__init__()
        self.compiled = torch.compile(Model(*args))

    def forward(self, *inputs):
        return self.compiled(*inputs)
