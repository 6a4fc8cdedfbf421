"""Cheat: the baseline runs in this process too, so the operator it calls is made slow, and
this model calls another one; the harness's bursts of the baseline there and in its own
process must disagree and take the gain back (the flag says by how much)."""
# expect: slower  (what the harness must say; benchmarks/expected_verdicts.py)

import time

import torch
import torch.nn as nn

_relu = torch.relu


def _slow_relu(x: torch.Tensor) -> torch.Tensor:
    time.sleep(0.002)
    return _relu(x)


torch.relu = _slow_relu


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.clamp(x, min=0)

