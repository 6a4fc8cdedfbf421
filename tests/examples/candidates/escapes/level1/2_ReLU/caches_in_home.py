# expect: passed
# Libraries keep caches under ~ (CuPy in ~/.cupy, builds in ~/.cache/torch_extensions): an
# honest candidate that does the same writes into its own scratch home.
import os

import torch
import torch.nn as nn

cache = os.path.join(os.path.expanduser("~"), ".cache", "kb-honest")
os.makedirs(cache, exist_ok=True)
with open(os.path.join(cache, "note.txt"), "w") as note:
    note.write("cached")


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
