# Generated from problems/level2/84_Gemm_BatchNorm_Scaling_Softmax.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""Linear layer, batch normalization, learned scalar scale, then softmax over features."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Gemm -> BatchNorm1d -> multiply by a scale parameter -> softmax(dim=1)."""

    def __init__(
        self,
        in_features: int,
        out_features: int,
        bn_eps: float = 1e-5,
        bn_momentum: float = 0.1,
        scale_shape=(1,),
    ):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.bn = nn.BatchNorm1d(out_features, eps=bn_eps, momentum=bn_momentum)
        self.scale = nn.Parameter(torch.ones(scale_shape))
        self.softmax = nn.Softmax(dim=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.gemm(x)
        x = self.bn(x)
        x = self.scale * x
        return self.softmax(x)


batch_size = 1024
in_features = 8192
out_features = 8192
bn_eps = 1e-5
bn_momentum = 0.1
scale_shape = (1,)


def get_inputs():
    # Scaled so the softmax is peaked rather than ~1/out_features everywhere.
    return [torch.randn(batch_size, in_features) * 5]


def get_init_inputs():
    return [in_features, out_features, bn_eps, bn_momentum, scale_shape]


class ModelNew(nn.Module):
    """The problem's own Model under torch.compile: built with the same arguments, so it draws
    the same weights, and compiled at its first call."""

    def __init__(self, *args):
        super().__init__()
        self.compiled = torch.compile(Model(*args))

    def forward(self, *inputs):
        return self.compiled(*inputs)
