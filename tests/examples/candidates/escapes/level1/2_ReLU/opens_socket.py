# expect: sandbox_violation
import os
import socket

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Report home (the test listens on this port).
        try:
            socket.create_connection(("127.0.0.1", int(os.environ["KB_ESCAPE_PORT"])),
                                     timeout=1).close()
        except OSError:
            pass

    def forward(self, x):
        return torch.relu(x)
