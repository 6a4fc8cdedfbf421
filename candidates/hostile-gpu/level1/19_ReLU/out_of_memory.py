"""Fault: asks the GPU for far more memory than it has."""
# expect: out_of_memory  (what the harness must say; benchmarks/expected_verdicts.py)

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        scratch = torch.empty(10**12, device=x.device)  # 4 TB
        return torch.relu(x) + scratch[:1] * 0
