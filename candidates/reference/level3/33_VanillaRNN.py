# Calibration candidate generated from problems/level3/33_VanillaRNN.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""One step of a wide vanilla RNN cell: h = tanh(W_ih [x, h0] + b_ih), y = W_ho h + b_ho."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Concatenate input and hidden state -> Linear -> Tanh (new hidden) -> Linear (output)."""

    def __init__(self, input_size: int, hidden_size: int, output_size: int):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.output_size = output_size
        # default initial hidden state, used when none is passed to forward
        self.register_buffer("hidden", torch.randn(batch_size, hidden_size), persistent=False)
        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
        self.h2o = nn.Linear(hidden_size, output_size)
        self.tanh = nn.Tanh()

    def forward(self, x: torch.Tensor, initial_hidden: torch.Tensor | None = None) -> torch.Tensor:
        hidden = self.hidden if initial_hidden is None else initial_hidden
        combined = torch.cat((x, hidden), dim=1)
        hidden = self.tanh(self.i2h(combined))
        return self.h2o(hidden)


batch_size = 256
input_size = 16384
hidden_size = 16384
output_size = 8192
sequence_length = 256


def get_inputs():
    return [torch.randn(batch_size, input_size), torch.randn(batch_size, hidden_size)]


def get_init_inputs():
    return [input_size, hidden_size, output_size]
