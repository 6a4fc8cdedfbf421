import torch
import torch.nn as nn

# Honest, but trades fp32 for TF32 in every matmul and convolution of the process.
torch.backends.cuda.matmul.allow_tf32 = True


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
