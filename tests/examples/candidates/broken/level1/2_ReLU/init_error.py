import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        raise ValueError("weights not found")

    def forward(self, x):
        return x.clamp_min(0)
