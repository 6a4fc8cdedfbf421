import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# A C++ kernel that does not compile, built only from the second call on (so not by a first
# call ahead of the items), and the quiet fallback that generated code often has. Its many
# errors make a compiler transcript of several kilobytes, as real failed builds do, and
# it prints kilobytes more after catching the error.
CPP_SOURCE = r"""
#include <torch/extension.h>
torch::Tensor relu(torch::Tensor x) { return x.clamp_min(0) }
""" + "".join(f"torch::Tensor unused_{i}(torch::Tensor x) {{ return x.not_a_method_{i}(); }}\n"
              for i in range(24))


class ModelNew(nn.Module):
    calls = 0

    def forward(self, x):
        ModelNew.calls += 1
        if ModelNew.calls > 1:
            try:
                load_inline(name="kb_test_cpu_late_fallback", cpp_sources=CPP_SOURCE,
                            functions=["relu"])
            except Exception as exc:  # a long warning after the compiler's transcript
                print(f"kernel build failed, using PyTorch instead: {exc!r}"[:3000])
        return torch.relu(x)
