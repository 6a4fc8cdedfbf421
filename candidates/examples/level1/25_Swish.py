"""Swish in one Triton pass: eager runs sigmoid and multiply as two kernels (four passes over
memory); this reads x once and writes the result once."""
# expect: passed  (what the harness must say; benchmarks/expected_verdicts.py)

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def swish_kernel(x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)  # fp16/bf16 computed in fp32
    tl.store(out_ptr + offsets, (x * tl.sigmoid(x)).to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        block = 4096
        swish_kernel[(triton.cdiv(n, block),)](x, out, n, BLOCK=block)
        return out
