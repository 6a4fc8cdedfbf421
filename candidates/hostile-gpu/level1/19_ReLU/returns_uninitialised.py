"""Cheat: hopes that fresh device memory still holds the reference's answer."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.empty_like(x)
