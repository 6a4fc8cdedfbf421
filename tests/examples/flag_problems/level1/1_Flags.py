import torch
import torch.nn as nn

SEEN = []  # the fp32 matmul precision each call of the reference ran under


class Model(nn.Module):
    def forward(self, x):
        SEEN.append(torch.get_float32_matmul_precision())
        return torch.relu(x)


def get_inputs():
    return [torch.randn(8, 8)]


def get_init_inputs():
    return []
