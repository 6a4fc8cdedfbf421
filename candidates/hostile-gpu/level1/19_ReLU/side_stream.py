"""Cheat: runs the work on a side stream, so events recorded on the current stream see nothing."""
# expect: cheat|race  (what the harness must say; benchmarks/expected_verdicts.py)

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.stream = None

    def forward(self, x):
        if self.stream is None:
            self.stream = torch.cuda.Stream()
        out = torch.empty_like(x)
        self.stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.stream):
            out.copy_(torch.relu(x))
        return out
