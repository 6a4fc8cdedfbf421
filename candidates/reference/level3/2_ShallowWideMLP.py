# Calibration candidate generated from problems/level3/2_ShallowWideMLP.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Shallow, wide MLP: two wide hidden Linear+ReLU layers followed by an output Linear."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Multi-layer perceptron: (Linear -> ReLU) per hidden size, then a final Linear."""

    def __init__(self, input_size, hidden_layer_sizes, output_size):
        super().__init__()
        layers = []
        current_size = input_size
        for hidden_size in hidden_layer_sizes:
            layers.append(nn.Linear(current_size, hidden_size))
            layers.append(nn.ReLU())
            current_size = hidden_size
        layers.append(nn.Linear(current_size, output_size))
        self.network = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.network(x)


batch_size = 128
input_size = 16384
hidden_layer_sizes = [16384, 16384]
output_size = 16384


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_layer_sizes, output_size]
