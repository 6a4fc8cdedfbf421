# Calibration candidate generated from problems/level1/39_L2Norm_.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Row-wise L2 normalization."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Divides each row of x by its Euclidean norm along dim 1."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x / torch.norm(x, p=2, dim=1, keepdim=True)


batch_size = 32768
dim = 4095


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
