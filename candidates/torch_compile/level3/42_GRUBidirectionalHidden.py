# Generated from problems/level3/42_GRUBidirectionalHidden.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""Multi-layer bidirectional GRU over a sequence; returns the final hidden states h_n."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Bidirectional nn.GRU (sequence first) with initial state h0 -> final hidden states
    (2 * num_layers, batch, hidden_size)."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 3,
        bias: bool = True,
        batch_first: bool = False,
    ):
        super().__init__()
        self.gru = nn.GRU(
            input_size,
            hidden_size,
            num_layers,
            bias,
            batch_first,
            dropout=0,
            bidirectional=True,
        )

    def forward(self, x: torch.Tensor, h0: torch.Tensor) -> torch.Tensor:
        output, h_n = self.gru(x, h0)
        return h_n


batch_size = 10
seq_len = 512
input_size = 128
hidden_size = 256
num_layers = 6


def get_inputs():
    return [
        torch.randn(seq_len, batch_size, input_size),
        torch.randn(num_layers * 2, batch_size, hidden_size),
    ]


def get_init_inputs():
    return [input_size, hidden_size, num_layers]


class ModelNew(nn.Module):
    """The problem's own Model under torch.compile: built with the same arguments, so it draws
    the same weights, and compiled at its first call."""

    def __init__(self, *args):
        super().__init__()
        self.compiled = torch.compile(Model(*args))

    def forward(self, *inputs):
        return self.compiled(*inputs)
