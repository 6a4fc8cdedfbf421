"""Honest: its own stream waits for the caller's before reading, and the caller's waits for it
before the output is used."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.stream = torch.cuda.Stream()

    def forward(self, x):
        caller = torch.cuda.current_stream()
        self.stream.wait_stream(caller)
        with torch.cuda.stream(self.stream):
            out = torch.relu(x)
        caller.wait_stream(self.stream)
        out.record_stream(caller)
        return out
