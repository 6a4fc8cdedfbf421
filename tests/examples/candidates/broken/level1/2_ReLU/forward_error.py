import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        raise RuntimeError("kernel launch failed: bad grid")
