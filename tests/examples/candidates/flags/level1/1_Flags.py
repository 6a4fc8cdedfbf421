import torch
import torch.nn as nn

# Process-wide switches: they may speed up this candidate, and must not change the baseline.
torch.set_float32_matmul_precision("medium")
torch.backends.cudnn.deterministic = True
SEEN = []


class ModelNew(nn.Module):
    def forward(self, x):
        SEEN.append(torch.get_float32_matmul_precision())
        return torch.relu(x)
