# Generated from problems/level3/1_MLP.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""Three-layer MLP: two hidden Linear+ReLU layers followed by an output Linear."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Multi-layer perceptron: (Linear -> ReLU) per hidden size, then a final Linear."""

    def __init__(self, input_size, layer_sizes, output_size):
        super().__init__()
        layers = []
        current_size = input_size
        for layer_size in layer_sizes:
            layers.append(nn.Linear(current_size, layer_size))
            layers.append(nn.ReLU())
            current_size = layer_size
        layers.append(nn.Linear(current_size, output_size))
        self.network = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.network(x)


batch_size = 128
input_size = 16384
layer_sizes = [16384, 16384]
output_size = 8192


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, layer_sizes, output_size]


class ModelNew(nn.Module):
    """The problem's own Model under torch.compile: built with the same arguments, so it draws
    the same weights, and compiled at its first call."""

    def __init__(self, *args):
        super().__init__()
        self.compiled = torch.compile(Model(*args))

    def forward(self, *inputs):
        return self.compiled(*inputs)
