import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, factor: float):
        super().__init__()
        self.factor = factor

    def forward(self, x):
        return x * self.factor


size = 64


def get_inputs():
    return [torch.randn(size, size)]


def get_init_inputs():
    return [2.0]
