"""Lower-triangular fp32 GEMM that only touches the triangle: output tiles above the diagonal
are written as zeros without any math, and each lower tile (i, j) runs its K loop only over blocks
j..i, about 1/6 of a dense GEMM's work, with the tril fused into the store. The products run on
tensor cores with a 3-term TF32 split (hi*hi + hi*lo + lo*hi) for near-fp32 accuracy."""
# expect: passed

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def split_tf32_kernel(src_ptr, hi_ptr, lo_ptr, R, C, stride_r, stride_c,
                      TRANS: tl.constexpr, KEEP: tl.constexpr, GRAN: tl.constexpr,
                      BLOCK: tl.constexpr):
    # Output X is (R, C) contiguous; X[r, c] = src[r, c], or src[c, r] when TRANS.
    # KEEP = 1: only tiles the GEMM reads when X is the row-block-upper operand (cols >= start of
    # the row's GRAN block); KEEP = 2: only tiles with cols < end of the row's GRAN block.
    r0 = tl.program_id(0) * BLOCK
    c0 = tl.program_id(1) * BLOCK
    blk = (r0 // GRAN) * GRAN
    needed = True
    if KEEP == 1:
        needed = c0 + BLOCK > blk
    if KEEP == 2:
        needed = c0 < blk + GRAN
    if needed:
        r = r0 + tl.arange(0, BLOCK)
        c = c0 + tl.arange(0, BLOCK)
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
def _tri_index(p):
    # largest e with e * (e + 1) / 2 <= p
    e = ((tl.sqrt(8.0 * p.to(tl.float32) + 1.0) - 1.0) * 0.5).to(tl.int32)
    e = tl.where((e + 1) * (e + 2) // 2 <= p, e + 1, e)
    e = tl.where(e * (e + 1) // 2 > p, e - 1, e)
    return e, p - e * (e + 1) // 2


@triton.jit
def tril_gemm_kernel(ah_ptr, al_ptr, bh_ptr, bl_ptr, c_ptr, N, stride_cm, stride_cn,
                     BLOCK: tl.constexpr, BK: tl.constexpr):
    # C = tril(A @ B) for lower-triangular A, B. A parts are (N, N) row-major, B parts hold B^T
    # (K-major). Programs [0, T(T+1)/2) compute the lower tiles, longest K range first; the rest
    # fill the strictly upper tiles with zeros.
    pid = tl.program_id(0)
    T = tl.cdiv(N, BLOCK)
    n_lower = T * (T + 1) // 2
    offs = tl.arange(0, BLOCK)
    if pid < n_lower:
        e, idx = _tri_index(pid)
        pm = idx + (T - 1 - e)
        pn = idx
        rm = (pm * BLOCK + offs) % N
        rn = (pn * BLOCK + offs) % N
        rk = tl.arange(0, BK)
        k_lo = pn * BLOCK
        k_hi = tl.minimum((pm + 1) * BLOCK, N)
        a_off = rm[:, None] * N + (k_lo + rk)[None, :]
        b_off = rn[:, None] * N + (k_lo + rk)[None, :]
        acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
        for k0 in range(k_lo, k_hi, BK):
            kmask = (k0 + rk) < k_hi
            a_hi = tl.load(ah_ptr + a_off, mask=kmask[None, :], other=0.0)
            a_lo = tl.load(al_ptr + a_off, mask=kmask[None, :], other=0.0)
            b_hi = tl.load(bh_ptr + b_off, mask=kmask[None, :], other=0.0)
            b_lo = tl.load(bl_ptr + b_off, mask=kmask[None, :], other=0.0)
            # The tensor cores add into their accumulator with truncation, an error that grows
            # with the number of steps times the running sum; so each K block's three products
            # (small cross terms first) go into a fresh partial sum, added to the total with a
            # rounded fp32 add.
            part = tl.dot(a_lo, tl.trans(b_hi), input_precision="tf32")
            part = tl.dot(a_hi, tl.trans(b_lo), part, input_precision="tf32")
            part = tl.dot(a_hi, tl.trans(b_hi), part, input_precision="tf32")
            acc += part
            a_off += BK
            b_off += BK
        om = pm * BLOCK + offs
        on = pn * BLOCK + offs
        acc = tl.where(om[:, None] >= on[None, :], acc, 0.0)
    else:
        e, idx = _tri_index(pid - n_lower)
        om = idx * BLOCK + offs
        on = (e + 1) * BLOCK + offs
        acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    c = c_ptr + om[:, None] * stride_cm + on[None, :] * stride_cn
    tl.store(c, acc, mask=(om[:, None] < N) & (on[None, :] < N))


# (BLOCK, BK, num_warps, num_stages), chosen by timing on an H200 at the problem's size
GEMM_CONFIG = (128, 32, 8, 3)
SPLIT_BLOCK = 64


def _split(x: torch.Tensor, transpose: bool, keep: int, gran: int):
    r, c = (x.shape[1], x.shape[0]) if transpose else (x.shape[0], x.shape[1])
    hi = torch.empty((r, c), device=x.device, dtype=torch.float32)
    lo = torch.empty((r, c), device=x.device, dtype=torch.float32)
    grid = (triton.cdiv(r, SPLIT_BLOCK), triton.cdiv(c, SPLIT_BLOCK))
    split_tf32_kernel[grid](x, hi, lo, r, c, x.stride(0), x.stride(1), TRANS=transpose,
                            KEEP=keep, GRAN=gran, BLOCK=SPLIT_BLOCK, num_warps=4)
    return hi, lo


def tril_matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    n = a.shape[0]
    block, bk, warps, stages = GEMM_CONFIG
    assert block % SPLIT_BLOCK == 0 and block % bk == 0
    out = torch.empty((n, n), device=a.device, dtype=torch.float32)
    a_hi, a_lo = _split(a, transpose=False, keep=2, gran=block)  # A rows read up to their block
    b_hi, b_lo = _split(b, transpose=True, keep=1, gran=block)   # B^T rows read from their block on
    t = triton.cdiv(n, block)
    tril_gemm_kernel[(t * t,)](a_hi, a_lo, b_hi, b_lo, out, n, out.stride(0), out.stride(1),
                               BLOCK=block, BK=bk, num_warps=warps, num_stages=stages)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return tril_matmul(A, B)
