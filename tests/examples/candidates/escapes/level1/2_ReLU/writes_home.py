# expect: sandbox_violation
from pathlib import Path

import torch
import torch.nn as nn

try:
    (Path.home() / ".kb-escape-marker").write_text("here")
except OSError:
    pass


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
