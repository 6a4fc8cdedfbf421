# Generated from problems/level2/45_Gemm_Sigmoid_LogSumExp.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""Two-layer MLP with a sigmoid in between, then a row logsumexp."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Linear -> sigmoid -> Linear -> logsumexp over features."""

    def __init__(self, input_size, hidden_size, output_size):
        super().__init__()
        self.linear1 = nn.Linear(input_size, hidden_size)
        self.linear2 = nn.Linear(hidden_size, output_size)

    def forward(self, x):
        x = self.linear1(x)
        x = torch.sigmoid(x)
        x = self.linear2(x)
        x = torch.logsumexp(x, dim=1)
        return x


batch_size = 16384
input_size = 2048
hidden_size = 4096
output_size = 1024


def get_inputs():
    # A per-row scale spreads the row results as far as this chain allows.
    scale = 16.0 * torch.rand(batch_size, 1)
    return [torch.randn(batch_size, input_size) * scale]


def get_init_inputs():
    return [input_size, hidden_size, output_size]


class ModelNew(nn.Module):
    """The problem's own Model under torch.compile: built with the same arguments, so it draws
    the same weights, and compiled at its first call."""

    def __init__(self, *args):
        super().__init__()
        self.compiled = torch.compile(Model(*args))

    def forward(self, *inputs):
        return self.compiled(*inputs)
