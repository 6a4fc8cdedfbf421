import torch.nn as nn


class ModelNew(nn.Module):
    """The same computation with the columns reversed: other rounding, the same true answer."""

    def forward(self, x):
        x = x.flip(1)
        return (x - x.mean(dim=1, keepdim=True)).mean(dim=1)
