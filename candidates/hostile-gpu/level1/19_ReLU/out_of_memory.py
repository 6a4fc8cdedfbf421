"""Fault: asks the GPU for far more memory than it has."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        scratch = torch.empty(10**12, device=x.device)  # 4 TB
        return torch.relu(x) + scratch[:1] * 0
