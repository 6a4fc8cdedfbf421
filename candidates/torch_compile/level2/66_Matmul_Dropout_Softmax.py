# Generated from problems/level2/66_Matmul_Dropout_Softmax.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""Linear layer, dropout, then softmax over features."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Matmul -> Dropout (p=0: deterministic in train and eval mode) -> softmax(dim=1)."""

    def __init__(self, in_features: int, out_features: int, dropout_p: float):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.matmul(x)
        x = self.dropout(x)
        return torch.softmax(x, dim=1)


batch_size = 128
in_features = 16384
out_features = 16384
dropout_p = 0.0


def get_inputs():
    # Scaled so the softmax is peaked rather than ~1/out_features everywhere.
    return [torch.randn(batch_size, in_features) * 5]


def get_init_inputs():
    return [in_features, out_features, dropout_p]


class ModelNew(nn.Module):
    """The problem's own Model under torch.compile: built with the same arguments, so it draws
    the same weights, and compiled at its first call."""

    def __init__(self, *args):
        super().__init__()
        self.compiled = torch.compile(Model(*args))

    def forward(self, *inputs):
        return self.compiled(*inputs)
