# Calibration candidate generated from problems/level1/37_FrobeniusNorm_.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Normalization of a whole tensor by its Frobenius norm."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
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
