# expect: sandbox_violation
import os
from pathlib import Path

import torch
import torch.nn as nn

# Plant a library in another candidate's folder of the build cache.
planted = Path(os.environ["TORCH_EXTENSIONS_DIR"]).parent / ("0" * 24) / "planted.so"
try:
    planted.parent.mkdir(parents=True, exist_ok=True)
    planted.write_bytes(b"\x7fELF")
except OSError:
    pass


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
