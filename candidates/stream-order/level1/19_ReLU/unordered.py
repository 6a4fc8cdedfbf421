"""Runs forward on a stream of its own that neither waits for the caller's stream nor is
waited for: its answer depends on timing."""
# expect: race

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.stream = torch.cuda.Stream()

    def forward(self, x):
        with torch.cuda.stream(self.stream):
            return torch.relu(x)
