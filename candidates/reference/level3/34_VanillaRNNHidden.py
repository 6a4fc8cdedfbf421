# Calibration candidate generated from problems/level3/34_VanillaRNNHidden.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""Vanilla RNN unrolled over a sequence: h_t = tanh(W_ih [x_t, h_{t-1}] + b), y_t = W_ho h_t + b."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Per time step: concatenate input and hidden -> Linear -> Tanh -> Linear; stack outputs."""

    def __init__(self, input_size: int, hidden_size: int, output_size: int):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.output_size = output_size
        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
        self.h2o = nn.Linear(hidden_size, output_size)
        self.tanh = nn.Tanh()

    def forward(self, x: torch.Tensor, h0: torch.Tensor) -> torch.Tensor:
        # x: (seq_len, batch, input_size); h0: (batch, hidden_size)
        hidden = h0
        outputs = []
        for t in range(x.size(0)):
            combined = torch.cat((x[t], hidden), dim=1)
            hidden = self.tanh(self.i2h(combined))
            outputs.append(self.h2o(hidden))
        return torch.stack(outputs, dim=0)  # (seq_len, batch, output_size)


batch_size = 8
input_size = 1024
hidden_size = 256
output_size = 128
sequence_length = 256


def get_inputs():
    return [
        torch.randn(sequence_length, batch_size, input_size),
        torch.randn(batch_size, hidden_size),
    ]


def get_init_inputs():
    return [input_size, hidden_size, output_size]
