import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 4)

    def forward(self, x):
        return torch.relu(self.linear(x))


def get_inputs():
    # Its inputs do not fit its own layer: the reference fails, not the candidate.
    return [torch.randn(4, 5)]


def get_init_inputs():
    return []
