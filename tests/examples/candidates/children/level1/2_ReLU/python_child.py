# expect: sandbox_violation
import os
import subprocess
import sys

import torch
import torch.nn as nn

# A Python child that swallows the refusal of its write.
subprocess.run([sys.executable, "-c", "import os, sys\n"
                "try:\n    open(os.environ['KB_CHILD_TARGET'], 'w').write('x')\n"
                "except OSError:\n    pass\n"], check=True)


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
