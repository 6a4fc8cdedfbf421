"""Candidate sources the batch tests and the cluster tests share: attempts whose behaviour
in time a test arranges (they write a marker file: run them with confine off)."""

# A ReLU that notes when it was imported and, past the first call, works `seconds` per call.
SLOW = '''
import time
import torch
open({marker!r}, "a").write("imported\\n")

class ModelNew(torch.nn.Module):
    calls = 0

    def forward(self, x):
        ModelNew.calls += 1
        if ModelNew.calls > 1:
            time.sleep({seconds})
        return torch.relu(x)
'''
ABORTS = '''
import os
import torch

class ModelNew(torch.nn.Module):
    def forward(self, x):
        os.abort()
'''
EXITS = ABORTS.replace("os.abort()", "os._exit(3)")
