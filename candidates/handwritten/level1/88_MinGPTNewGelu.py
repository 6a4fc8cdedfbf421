"""Tanh-GELU in a single elementwise Triton pass, using 0.5 * (1 + tanh(u)) = sigmoid(2u), so
the result is x * sigmoid(2u) with u = sqrt(2/pi) * (x + 0.044715 x^3). Eager chains about eight
kernels (pow, muls, adds, tanh), each a full trip through memory; this reads and writes x once."""
# expect: passed

import math

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def new_gelu_kernel(x_ptr, out_ptr, n_elements, K0: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    u2 = (2.0 * K0) * (x + 0.044715 * (x * x * x))
    y = x / (1.0 + tl.exp(-u2))  # exp overflow to inf gives the exact limit 0 for large -x
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        if n == 0:
            return out
        block = 4096
        new_gelu_kernel[(triton.cdiv(n, block),)](x, out, n, K0=math.sqrt(2.0 / math.pi),
                                                  BLOCK=block, num_warps=8)
        return out
