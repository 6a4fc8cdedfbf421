# Generated from problems/level1/95_CrossEntropyLoss.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""Cross-entropy loss of class logits against integer class targets."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """torch.nn.functional.cross_entropy (mean over the batch)."""

    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.cross_entropy(predictions, targets)


batch_size = 32768
num_classes = 4096
input_shape = (num_classes,)
dim = 1


def get_inputs():
    # A per-draw logit scale makes the loss value depend on the data, not a fixed constant.
    scale = torch.rand(()) * 4 + 0.5
    predictions = torch.randn(batch_size, *input_shape) * scale
    targets = torch.randint(0, num_classes, (batch_size,))
    return [predictions, targets]


def get_init_inputs():
    return []


class ModelNew(nn.Module):
    """The problem's own Model under torch.compile: built with the same arguments, so it draws
    the same weights, and compiled at its first call."""

    def __init__(self, *args):
        super().__init__()
        self.compiled = torch.compile(Model(*args))

    def forward(self, *inputs):
        return self.compiled(*inputs)
