# Honest: the eager reference, run after the faults above on a fresh worker.
"""Elementwise ReLU activation."""
# expect: passed|slower  (what the harness must say; benchmarks/expected_verdicts.py)

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Applies ReLU elementwise."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


batch_size = 4096
dim = 24576


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
