"""Linear + bias, Swish and scale in the epilogue of one TF32 tensor-core GEMM. With 128 rows and
K = 32768 the work is streaming W once; eager's fp32 SGEMM is far from that bound."""
# expect: passed

import torch
import torch.nn as nn
import triton
import triton.language as tl

# Operands enter the tensor cores as TF32 (10-bit mantissa), accumulation stays fp32.
DOT_PRECISION = "tf32"


@triton.jit
def linear_swish_scale_kernel(
    x_ptr, w_ptr, out_ptr, b_ptr,
    M, N, K,
    stride_xm, stride_xk, stride_wn, stride_wk, stride_om, stride_on,
    scale,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr, EVEN_K: tl.constexpr, PRECISION: tl.constexpr,
):
    # Tile order: bands of GROUP_M tile-rows sweep across N together, so the W panels they
    # read are still in L2 when the next row of the band needs them.
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    band = GROUP_M * tiles_n
    first_m = (pid // band) * GROUP_M
    band_rows = tl.minimum(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % band) % band_rows
    pid_n = (pid % band) // band_rows

    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    # Edge tiles load wrapped (valid) rows/columns instead of masking them; the store drops them.
    x_tile = x_ptr + (rows % M)[:, None] * stride_xm + ks[None, :] * stride_xk
    # W is (N, K); reading it as a (BLOCK_K, BLOCK_N) block of W^T keeps K contiguous.
    w_tile = w_ptr + (cols % N)[None, :] * stride_wn + ks[:, None] * stride_wk

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        if EVEN_K:
            a = tl.load(x_tile)
            b = tl.load(w_tile)
        else:
            a = tl.load(x_tile, mask=ks[None, :] < K - k0, other=0.0)
            b = tl.load(w_tile, mask=ks[:, None] < K - k0, other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
        x_tile += BLOCK_K * stride_xk
        w_tile += BLOCK_K * stride_wk

    bias = tl.load(b_ptr + cols, mask=cols < N, other=0.0)
    acc += bias[None, :]
    y = acc * tl.sigmoid(acc) * scale
    out_tile = out_ptr + rows[:, None] * stride_om + cols[None, :] * stride_on
    inside = (rows[:, None] < M) & (cols[None, :] < N)
    tl.store(out_tile, y.to(out_ptr.dtype.element_ty), mask=inside)


def _tile_config(M, N, K):
    """(BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, num_warps, num_stages) for this problem shape."""
    # few rows, huge K: streaming W dominates; 128 x 128 tiles give one wave of programs
    if N >= 4096:
        return 128, 128, 64, 8, 4, 3
    return 64, 64, 32, 8, 4, 3


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scaling_factor):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        M, K = x.shape
        weight = self.matmul.weight
        N = weight.shape[0]
        out = torch.empty((M, N), device=x.device, dtype=x.dtype)
        block_m, block_n, block_k, group_m, warps, stages = _tile_config(M, N, K)
        grid = (triton.cdiv(M, block_m) * triton.cdiv(N, block_n),)
        linear_swish_scale_kernel[grid](
            x, weight, out, self.matmul.bias,
            M, N, K,
            x.stride(0), x.stride(1), weight.stride(0), weight.stride(1),
            out.stride(0), out.stride(1),
            float(self.scaling_factor),
            BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k, GROUP_M=group_m,
            EVEN_K=(K % block_k == 0), PRECISION=DOT_PRECISION,
            num_warps=warps, num_stages=stages,
        )
        return out
