# expect: passed
# Generated code also builds into a folder beside its own file
# (os.path.dirname(__file__)/build): a confined candidate does so in a folder of its own, not
# in the candidate set, which stays unchanged.
import os

import torch
import torch.nn as nn

build = os.path.join(os.path.dirname(os.path.abspath(__file__)), "build")
os.makedirs(build, exist_ok=True)
with open(os.path.join(build, "main.cpp"), "w") as source:
    source.write("// a build's source\n")


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
