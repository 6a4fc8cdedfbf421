# Calibration candidate generated from problems/level1/98_KLDivLoss.py by tools/make_candidate_sets.py: the eager reference, renamed ModelNew.
"""KL divergence between two row-wise probability distributions."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """kl_div(log(predictions), targets) with 'batchmean' reduction."""

    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.kl_div(torch.log(predictions), targets, reduction="batchmean")


batch_size = 4096
input_shape = (16384,)
dim = 1


def get_inputs():
    # Per-draw logit scales make the divergence depend on the data, not a fixed constant.
    pred_scale = torch.rand(()) * 2 + 0.5
    target_scale = torch.rand(()) * 2 + 0.5
    predictions = (torch.randn(batch_size, *input_shape) * pred_scale).softmax(dim=-1)
    targets = (torch.randn(batch_size, *input_shape) * target_scale).softmax(dim=-1)
    return [predictions, targets]


def get_init_inputs():
    return []
