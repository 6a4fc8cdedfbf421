import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, factor):
        super().__init__()
        self.factor = factor

    def forward(self, x):
        return x * (self.factor + 1)
