# expect: sandbox_violation
import torch
import torch.nn as nn

import pytest_kernelbench.reporting.scoring


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Open the plugin's own scoring code for writing (opening it is the attempt; nothing
        # is written, so a run where it is not refused still leaves the file as it was).
        try:
            open(pytest_kernelbench.reporting.scoring.__file__, "a").close()
        except OSError:
            pass

    def forward(self, x):
        return torch.relu(x)
