import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        out = x.clamp_min(0)
        out[0, 0] = float("nan")
        return out
