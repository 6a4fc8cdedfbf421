"""Fault: an out-of-range gather trips a device-side assert."""
# expect: cuda_error  (what the harness must say; benchmarks/expected_verdicts.py)

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        index = torch.full((1,), x.shape[0] + 10**6, device=x.device, dtype=torch.long)
        return torch.relu(x) + x[index].sum() * 0
