# Generated from problems/level3/49_Mamba2ReturnFinalState.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""Mamba-2 state-space duality (SSD) scan, chunked minimal form: returns the final SSM state."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Chunked SSD scan: per-chunk states from exp-decayed B x X products and an inter-chunk
    recurrence over them; returns the state after the last chunk, shape (b, h, d_head, d_state)."""

    def __init__(
        self,
        batch_size: int,
        seq_length: int,
        n_heads: int,
        d_head: int,
        d_state: int,
        block_len: int = 64,
    ):
        super().__init__()
        assert seq_length % block_len == 0, "sequence length must be divisible by block length"
        self.batch_size = batch_size
        self.seq_length = seq_length
        self.n_heads = n_heads
        self.d_head = d_head
        self.d_state = d_state
        self.block_len = block_len

        # per-step log-decay, negative so that the decay factors exp(A) lie in (0, 1]
        self.A = nn.Parameter(-0.05 * torch.randn(batch_size, seq_length, n_heads).abs())
        self.B = nn.Parameter(torch.randn(batch_size, seq_length, n_heads, d_state))
        self.C = nn.Parameter(torch.randn(batch_size, seq_length, n_heads, d_state))

    @staticmethod
    def segsum(x: torch.Tensor) -> torch.Tensor:
        """Segment sums out[..., i, j] = sum(x[..., j+1 : i+1]) for j <= i; -inf above the
        diagonal."""
        T = x.size(-1)
        x_cumsum = torch.cumsum(x, dim=-1)
        x_segsum = x_cumsum[..., :, None] - x_cumsum[..., None, :]
        mask = x.new_ones((T, T), dtype=torch.bool).tril()
        return x_segsum.masked_fill(~mask, -torch.inf)

    def _chunk(self, t: torch.Tensor) -> torch.Tensor:
        """(b, c*l, ...) -> (b, c, l, ...)."""
        return t.reshape(t.size(0), t.size(1) // self.block_len, self.block_len, *t.shape[2:])

    def forward(self, X: torch.Tensor, initial_states: torch.Tensor | None = None) -> torch.Tensor:
        X_blocks, A_blocks, B_blocks, C_blocks = (
            self._chunk(t) for t in (X, self.A, self.B, self.C)
        )
        A_blocks = A_blocks.permute(0, 3, 1, 2)  # (b, h, c, l)
        A_cumsum = torch.cumsum(A_blocks, dim=-1)

        # 1. state at the end of each chunk
        decay_states = torch.exp(A_cumsum[:, :, :, -1:] - A_cumsum)
        states = torch.einsum("bclhn,bhcl,bclhp->bchpn", B_blocks, decay_states, X_blocks)

        # 2. inter-chunk recurrence
        if initial_states is None:
            initial_states = torch.zeros_like(states[:, :1])
        states = torch.cat([initial_states, states], dim=1)
        decay_chunk = torch.exp(self.segsum(F.pad(A_cumsum[:, :, :, -1], (1, 0))))
        new_states = torch.einsum("bhzc,bchpn->bzhpn", decay_chunk, states)
        return new_states[:, -1]


batch_size = 2048
seq_length = 128
n_heads = 8
d_head = 64
d_state = 16
block_len = 64


def get_inputs():
    return [torch.randn(batch_size, seq_length, n_heads, d_head)]


def get_init_inputs():
    return [batch_size, seq_length, n_heads, d_head, d_state, block_len]


class ModelNew(nn.Module):
    """The problem's own Model under torch.compile: built with the same arguments, so it draws
    the same weights, and compiled at its first call."""

    def __init__(self, *args):
        super().__init__()
        self.compiled = torch.compile(Model(*args))

    def forward(self, *inputs):
        return self.compiled(*inputs)
