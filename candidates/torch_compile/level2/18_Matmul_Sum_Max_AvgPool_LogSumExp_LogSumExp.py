# Generated from problems/level2/18_Matmul_Sum_Max_AvgPool_LogSumExp_LogSumExp.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""Linear layer followed by a row sum, max, mean and two logsumexp reductions."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Linear -> sum -> max -> mean -> logsumexp -> logsumexp, all over dim 1 (kept)."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        x = self.linear(x)
        x = torch.sum(x, dim=1, keepdim=True)
        x = torch.max(x, dim=1, keepdim=True)[0]
        x = torch.mean(x, dim=1, keepdim=True)
        x = torch.logsumexp(x, dim=1, keepdim=True)
        x = torch.logsumexp(x, dim=1, keepdim=True)
        return x


batch_size = 1024
in_features = 8192
out_features = 8192


def get_inputs():
    return [torch.rand(batch_size, in_features)]


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
