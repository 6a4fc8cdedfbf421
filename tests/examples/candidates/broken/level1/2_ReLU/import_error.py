import torch.nn as nn
import kernel_library_that_does_not_exist  # noqa: F401


class ModelNew(nn.Module):
    def forward(self, x):
        return x.clamp_min(0)
