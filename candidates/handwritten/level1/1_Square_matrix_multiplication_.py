"""fp32 GEMM on tensor cores with a 3-term TF32 split: a cheap pre-pass writes each operand as
hi + lo (hi rounded to TF32, B stored K-major), then one tiled kernel accumulates hi*hi + hi*lo +
lo*hi. Near-fp32 accuracy at several times the rate of the SIMT fp32 SGEMM that eager runs."""
# expect: passed

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def split_tf32_kernel(src_ptr, hi_ptr, lo_ptr, R, C, stride_r, stride_c,
                      TRANS: tl.constexpr, BLOCK: tl.constexpr):
    # Output X is (R, C) contiguous; X[r, c] = src[r, c], or src[c, r] when TRANS.
    r = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    c = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = (r[:, None] < R) & (c[None, :] < C)
    if TRANS:
        src = src_ptr + c[None, :] * stride_r + r[:, None] * stride_c
    else:
        src = src_ptr + r[:, None] * stride_r + c[None, :] * stride_c
    x = tl.load(src, mask=mask, other=0.0).to(tl.float32)
    bits = x.to(tl.int32, bitcast=True)
    hi = ((bits + 0x1000) & -8192).to(tl.float32, bitcast=True)  # round to nearest TF32
    lo = x - hi                                                   # exact in fp32
    dst = r[:, None] * C + c[None, :]
    tl.store(hi_ptr + dst, hi, mask=mask)
    tl.store(lo_ptr + dst, lo, mask=mask)


@triton.jit
def gemm_tf32x3_kernel(ah_ptr, al_ptr, bh_ptr, bl_ptr, c_ptr, M, N, K,
                       stride_cm, stride_cn,
                       BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr):
    # A parts are (M, K) contiguous, B parts are (N, K) contiguous (K-major for the MMA).
    pid = tl.program_id(0)
    grid_m = tl.cdiv(M, BM)
    grid_n = tl.cdiv(N, BN)
    per_group = GROUP_M * grid_n
    first_m = (pid // per_group) * GROUP_M
    rows_in_group = tl.minimum(grid_m - first_m, GROUP_M)
    pm = first_m + (pid % per_group) % rows_in_group
    pn = (pid % per_group) // rows_in_group

    rm = (pm * BM + tl.arange(0, BM)) % M  # wrapped rows: in bounds, discarded at the store
    rn = (pn * BN + tl.arange(0, BN)) % N
    rk = tl.arange(0, BK)
    a_off = rm[:, None] * K + rk[None, :]
    b_off = rn[:, None] * K + rk[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        kmask = (k0 + rk) < K
        a_hi = tl.load(ah_ptr + a_off, mask=kmask[None, :], other=0.0)
        a_lo = tl.load(al_ptr + a_off, mask=kmask[None, :], other=0.0)
        b_hi = tl.load(bh_ptr + b_off, mask=kmask[None, :], other=0.0)
        b_lo = tl.load(bl_ptr + b_off, mask=kmask[None, :], other=0.0)
        # The tensor cores add into their accumulator with truncation, an error that grows with the
        # number of steps times the running sum; so each K block's three products (small cross terms
        # first) go into a fresh partial sum, which is added to the total with a rounded fp32 add.
        part = tl.dot(a_lo, tl.trans(b_hi), input_precision="tf32")
        part = tl.dot(a_hi, tl.trans(b_lo), part, input_precision="tf32")
        part = tl.dot(a_hi, tl.trans(b_hi), part, input_precision="tf32")
        acc += part
        a_off += BK
        b_off += BK

    om = pm * BM + tl.arange(0, BM)
    on = pn * BN + tl.arange(0, BN)
    c = c_ptr + om[:, None] * stride_cm + on[None, :] * stride_cn
    tl.store(c, acc, mask=(om[:, None] < M) & (on[None, :] < N))


# (BM, BN, BK, num_warps, num_stages): the fastest of those timed on an H200 at 4096^3
GEMM_CONFIG = (128, 128, 32, 8, 3)


def _split(x: torch.Tensor, transpose: bool):
    r, c = (x.shape[1], x.shape[0]) if transpose else (x.shape[0], x.shape[1])
    hi = torch.empty((r, c), device=x.device, dtype=torch.float32)
    lo = torch.empty((r, c), device=x.device, dtype=torch.float32)
    block = 64
    grid = (triton.cdiv(r, block), triton.cdiv(c, block))
    split_tf32_kernel[grid](x, hi, lo, r, c, x.stride(0), x.stride(1),
                            TRANS=transpose, BLOCK=block, num_warps=4)
    return hi, lo


def matmul_fp32(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    M, K = a.shape
    N = b.shape[1]
    out = torch.empty((M, N), device=a.device, dtype=torch.float32)
    a_hi, a_lo = _split(a, transpose=False)
    b_hi, b_lo = _split(b, transpose=True)
    bm, bn, bk, warps, stages = GEMM_CONFIG
    grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
    gemm_tf32x3_kernel[grid](a_hi, a_lo, b_hi, b_lo, out, M, N, K, out.stride(0), out.stride(1),
                             BM=bm, BN=bn, BK=bk, GROUP_M=8, num_warps=warps, num_stages=stages)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return matmul_fp32(A, B)
