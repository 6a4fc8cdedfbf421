"""torch.relu replayed from a CUDA graph of the candidate's own: no kernel of its own runs."""
# expect kernels: torch-only  (benchmarks/attribution_check.py)

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.graph = None
        self.static_in = self.static_out = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.graph is None or self.static_in.shape != x.shape or self.static_in.dtype != x.dtype:
            self.static_in = x.clone()
            torch.relu(self.static_in)  # warm outside the capture
            torch.cuda.synchronize()
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph):
                self.static_out = torch.relu(self.static_in)
        self.static_in.copy_(x)
        self.graph.replay()
        return self.static_out.clone()
