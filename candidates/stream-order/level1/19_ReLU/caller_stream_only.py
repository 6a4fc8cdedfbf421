"""Honest: makes a stream but does all of forward's work on the caller's stream."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.unused = torch.cuda.Stream()

    def forward(self, x):
        return torch.relu(x)
