# Generated from problems/level1/97_ScaledDotProductAttention.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""Scaled dot-product attention (no mask, no dropout)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """softmax(Q K^T / sqrt(d)) V via torch.nn.functional.scaled_dot_product_attention."""

    def __init__(self):
        super().__init__()

    def forward(self, Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.scaled_dot_product_attention(Q, K, V)


batch_size = 4
num_heads = 32
sequence_length = 512
embedding_dimension = 1024


def get_inputs():
    Q = torch.randn(batch_size, num_heads, sequence_length, embedding_dimension)
    K = torch.randn(batch_size, num_heads, sequence_length, embedding_dimension)
    V = torch.randn(batch_size, num_heads, sequence_length, embedding_dimension)
    return [Q, K, V]


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
