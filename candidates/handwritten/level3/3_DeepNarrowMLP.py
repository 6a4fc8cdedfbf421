"""Deep narrow MLP (17 Linear layers, batch 1024) with each Linear (+ReLU) as one Triton GEMM on
TF32 tensor cores, bias + ReLU fused into the epilogue: one kernel per layer instead of an fp32
SGEMM plus a ReLU pass. Operands are rounded to nearest TF32 in registers, since the tensor
cores' truncation biases every layer the same way and 17 layers would add that up."""
# expect: passed

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def linear_bias_act_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K,
                           stride_xm, stride_wn, stride_ym,
                           RELU: tl.constexpr, ROUND: tl.constexpr, BM: tl.constexpr,
                           BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr):
    # y = act(x @ w^T + b); x (M, K), w (N, K), both unit stride along K. With ROUND, both
    # operands are rounded to nearest TF32 before the MMA, which would otherwise truncate them:
    # truncation shrinks every product by ~2^-11 on average, a bias that compounds layer by layer.
    pid = tl.program_id(0)
    grid_m = tl.cdiv(M, BM)
    grid_n = tl.cdiv(N, BN)
    per_group = GROUP_M * grid_n
    first_m = (pid // per_group) * GROUP_M
    rows_in_group = tl.minimum(grid_m - first_m, GROUP_M)
    pm = first_m + (pid % per_group) % rows_in_group
    pn = (pid % per_group) // rows_in_group

    rm = (pm * BM + tl.arange(0, BM)) % M  # wrapped rows stay in bounds; dropped at the store
    rn = (pn * BN + tl.arange(0, BN)) % N
    rk = tl.arange(0, BK)
    x_tile = x_ptr + rm[:, None] * stride_xm + rk[None, :]
    w_tile = w_ptr + rn[:, None] * stride_wn + rk[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        kmask = (k0 + rk) < K
        a = tl.load(x_tile, mask=kmask[None, :], other=0.0)
        w = tl.load(w_tile, mask=kmask[None, :], other=0.0)
        if ROUND:
            a = ((a.to(tl.int32, bitcast=True) + 0x1000) & -8192).to(tl.float32, bitcast=True)
            w = ((w.to(tl.int32, bitcast=True) + 0x1000) & -8192).to(tl.float32, bitcast=True)
        acc = tl.dot(a, tl.trans(w), acc, input_precision="tf32")
        x_tile += BK
        w_tile += BK

    om = pm * BM + tl.arange(0, BM)
    on = pn * BN + tl.arange(0, BN)
    acc += tl.load(b_ptr + on, mask=on < N, other=0.0)[None, :]
    if RELU:
        acc = tl.maximum(acc, 0.0)
    y = y_ptr + om[:, None] * stride_ym + on[None, :]
    tl.store(y, acc, mask=(om[:, None] < M) & (on[None, :] < N))


def _config(m: int, n: int, k: int):
    """(BM, BN, BK, num_warps, num_stages): the fastest of those timed on an H200, per shape."""
    if triton.cdiv(m, 128) * triton.cdiv(n, 128) >= 264:
        return 128, 128, 64, 8, 3  # the 1024 -> 8192 output layer
    return 128, 64, 32, 4, 4       # the 1024-wide layers: 128 programs or more


def linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, relu: bool) -> torch.Tensor:
    if x.stride(-1) != 1:
        x = x.contiguous()
    if weight.stride(-1) != 1:
        weight = weight.contiguous()
    m, k = x.shape
    n = weight.shape[0]
    y = torch.empty((m, n), device=x.device, dtype=torch.float32)
    bm, bn, bk, warps, stages = CONFIG(m, n, k)
    grid = (triton.cdiv(m, bm) * triton.cdiv(n, bn),)
    linear_bias_act_kernel[grid](x, weight, bias, y, m, n, k,
                                 x.stride(0), weight.stride(0), y.stride(0),
                                 RELU=relu, ROUND=ROUND_OPERANDS, BM=bm, BN=bn, BK=bk, GROUP_M=8,
                                 num_warps=warps, num_stages=stages)
    return y


CONFIG = _config
# round x and W to nearest TF32 in the kernel (see the kernel's comment)
ROUND_OPERANDS = True


class ModelNew(nn.Module):
    def __init__(self, input_size, hidden_layer_sizes, output_size):
        super().__init__()
        layers = []
        current_size = input_size
        for hidden_size in hidden_layer_sizes:
            layers.append(nn.Linear(current_size, hidden_size))
            layers.append(nn.ReLU())
            current_size = hidden_size
        layers.append(nn.Linear(current_size, output_size))
        self.network = nn.Sequential(*layers)
        self.linears = [m for m in self.network if isinstance(m, nn.Linear)]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        last = len(self.linears) - 1
        for i, lin in enumerate(self.linears):
            x = linear(x, lin.weight, lin.bias, relu=i < last)
        return x
