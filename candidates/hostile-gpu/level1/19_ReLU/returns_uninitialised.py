"""Cheat: hopes that fresh device memory still holds the reference's answer."""
# expect: mismatch|cheat  (what the harness must say; benchmarks/expected_verdicts.py)

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.empty_like(x)
