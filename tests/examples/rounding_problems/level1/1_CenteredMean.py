import torch
import torch.nn as nn


class Model(nn.Module):
    """Each row's mean after centring: zero in exact arithmetic, rounding noise in fp32."""

    def forward(self, x):
        return (x - x.mean(dim=1, keepdim=True)).mean(dim=1)


def get_inputs():
    return [torch.rand(64, 4096)]


def get_init_inputs():
    return []
