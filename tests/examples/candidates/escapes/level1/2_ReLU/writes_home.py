# expect: sandbox_violation
import os
import pwd
from pathlib import Path

import torch
import torch.nn as nn

try:  # the account's real home, not $HOME
    (Path(pwd.getpwuid(os.getuid()).pw_dir) / ".kb-escape-marker").write_text("here")
except OSError:
    pass


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
