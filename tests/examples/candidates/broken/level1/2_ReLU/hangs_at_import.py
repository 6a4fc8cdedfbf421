import time

import torch.nn as nn

time.sleep(3600)  # stands in for a build that never finishes


class ModelNew(nn.Module):
    def forward(self, x):
        return x.clamp_min(0)
