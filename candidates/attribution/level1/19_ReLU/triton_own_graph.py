"""ReLU in a Triton kernel that the candidate replays from a CUDA graph of its own: the
harness cannot capture a call that replays a graph, so its kernels must be read from a trace."""
# expect kernels: own  (benchmarks/attribution_check.py)

import torch
import torch.nn as nn
import triton
import triton.language as tl

BLOCK = 4096


@triton.jit
def relu_kernel(x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, tl.maximum(x, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.graph = None
        self.static_in = self.static_out = None

    def _launch(self) -> None:
        n = self.static_in.numel()
        relu_kernel[(triton.cdiv(n, BLOCK),)](self.static_in, self.static_out, n, BLOCK=BLOCK)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.graph is None or self.static_in.shape != x.shape or self.static_in.dtype != x.dtype:
            self.static_in = torch.empty_like(x, memory_format=torch.contiguous_format)
            self.static_out = torch.empty_like(self.static_in)
            self.static_in.copy_(x)
            self._launch()  # Triton compiles outside the capture
            torch.cuda.synchronize()
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph):
                self._launch()
        self.static_in.copy_(x)
        self.graph.replay()
        return self.static_out.clone()
