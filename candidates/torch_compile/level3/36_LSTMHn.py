# Generated from problems/level3/36_LSTMHn.py by tools/make_candidate_sets.py: the problem's Model under torch.compile.
"""Multi-layer LSTM over a sequence; returns the final hidden state h_n of every layer."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """nn.LSTM (batch first) with initial states (h0, c0) -> returns h_n.

    The Linear head on the last step is still evaluated, but its result is not returned.
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int,
        output_size: int,
        dropout: float = 0.0,
    ):
        super().__init__()
        self.num_layers = num_layers
        self.hidden_size = hidden_size
        self.lstm = nn.LSTM(
            input_size,
            hidden_size,
            num_layers,
            batch_first=True,
            dropout=dropout,
            bidirectional=False,
        )
        self.fc = nn.Linear(hidden_size, output_size)

    def forward(self, x: torch.Tensor, h0: torch.Tensor, c0: torch.Tensor) -> torch.Tensor:
        out, state = self.lstm(x, (h0, c0))  # out: (batch, seq_len, hidden_size)
        out = self.fc(out[:, -1, :])
        return state[0]


batch_size = 10
sequence_length = 512
input_size = 128
hidden_size = 256
num_layers = 6
output_size = 10
dropout = 0.0


def get_inputs():
    return [
        torch.randn(batch_size, sequence_length, input_size),
        torch.randn(num_layers, batch_size, hidden_size),
        torch.randn(num_layers, batch_size, hidden_size),
    ]


def get_init_inputs():
    return [input_size, hidden_size, num_layers, output_size, dropout]


class ModelNew(nn.Module):
    """The problem's own Model under torch.compile: built with the same arguments, so it draws
    the same weights, and compiled at its first call."""

    def __init__(self, *args):
        super().__init__()
        self.compiled = torch.compile(Model(*args))

    def forward(self, *inputs):
        return self.compiled(*inputs)
