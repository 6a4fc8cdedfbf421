"""Cheat: the baseline runs in this process too, so the operator it calls is patched to launch
its kernel twice: the device's work doubles while the host's barely grows, a slowdown within
twice the baseline's time that no slower process explains. This model calls another operator;
the harness must scale the baseline back (the flag says by how much)."""
# expect: slower  (what the harness must say; benchmarks/expected_verdicts.py)

import torch
import torch.nn as nn

_relu = torch.relu


def _relu_twice(x: torch.Tensor) -> torch.Tensor:
    return _relu(_relu(x))


torch.relu = _relu_twice


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.clamp(x, min=0)
