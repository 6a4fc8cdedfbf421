# expect: passed
# Generated code often points its extension builds at ~/.cache/torch_extensions and writes
# there without creating it, as it exists in any home where torch has built before.
import os

import torch
import torch.nn as nn

with open(os.path.join(os.path.expanduser("~"), ".cache", "torch_extensions", "main.cpp"),
          "w") as source:
    source.write("// a build's source\n")


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
