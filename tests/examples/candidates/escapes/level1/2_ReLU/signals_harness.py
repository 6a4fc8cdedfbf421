# expect: sandbox_violation
import os
import signal

import torch
import torch.nn as nn


def grandparent() -> int:
    """The pytest process: the parent of the process this worker was forked from."""
    with open(f"/proc/{os.getppid()}/stat") as stat:
        return int(stat.read().rsplit(")", 1)[1].split()[1])


class ModelNew(nn.Module):
    def forward(self, x):
        try:
            os.kill(grandparent(), signal.SIGUSR1)
        except OSError:
            pass
        return torch.relu(x)
