import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.linear = nn.Linear(features, features)

    def forward(self, x):
        return torch.relu(self.linear(x))


features = 16


def get_inputs():
    return [torch.randn(8, features)]


def get_init_inputs():
    return [features]
