import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """ReLU off by 0.1%: inside v0's 1e-2, outside main's 1e-4 for fp32."""

    def forward(self, x):
        return torch.relu(x) * 1.001
