# Named for another problem than its id says (problem 1 is Scale): a typo to be warned about.
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return x.clamp_min(0)
