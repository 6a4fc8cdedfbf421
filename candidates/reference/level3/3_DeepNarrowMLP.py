# Calibration candidate generated from problems/level3/3_DeepNarrowMLP.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Deep, narrow MLP: sixteen hidden Linear+ReLU layers followed by an output Linear."""

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


batch_size = 1024
input_size = 8192
hidden_layer_sizes = [1024] * 16
output_size = 8192

# The default-initialised network attenuates its input so strongly that, at unit scale, its
# output is the classifier bias to within rounding: scaled inputs make the output depend on them.
input_scale = 1e5


def get_inputs():
    return [input_scale * torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_layer_sizes, output_size]
