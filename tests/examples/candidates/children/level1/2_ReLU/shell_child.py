# expect: not seen (a shell's refusal happens outside Python); the command is on the record
import os

import torch
import torch.nn as nn

# Where to write is told by the test (a file outside the worker's folders).
os.system(f"touch {os.environ['KB_CHILD_TARGET']} 2>/dev/null")


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
