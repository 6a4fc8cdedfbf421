# expect: passed, with its child's command on the record
import subprocess
import sys

import torch
import torch.nn as nn

# A Python child that writes where it may (its temporary folder) and reads the system.
subprocess.run([sys.executable, "-c", "import os, sys, tempfile\n"
                "with tempfile.NamedTemporaryFile('w') as f:\n    f.write(str(os.listdir(sys.prefix)))\n"],
               check=True)


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
