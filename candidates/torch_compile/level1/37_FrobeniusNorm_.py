# Generated from problems/level1/37_FrobeniusNorm_.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""Normalization of a whole tensor by its Frobenius norm."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Computes the Frobenius norm of the entire input and divides the input by it."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        norm = torch.norm(x, p="fro")
        return x / norm


batch_size = 7
features = 64
dim1 = 512
dim2 = 512


def get_inputs():
    x = torch.randn(batch_size, features, dim1, dim2)
    return [x]


def get_init_inputs():
    return []


class ModelNew(nn.Module):
    """The problem's own Model under torch.compile: built with the same arguments, so it draws
    the same weights, and compiled at its first call."""

    def __init__(self, *args):
        super().__init__()
        self.compiled = torch.compile(Model(*args))

    def forward(self, *inputs):
        return self.compiled(*inputs)
