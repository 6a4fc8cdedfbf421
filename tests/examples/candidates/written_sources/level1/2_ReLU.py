from pathlib import Path

import torch
import torch.nn as nn
from torch.utils import cpp_extension

# Stands in for generated code that writes its C++ file at every import, the same bytes each
# time, and builds it with cpp_extension.load (as some CUDA-L1 candidates do).
source = Path("kb_written") / "one.cpp"
source.parent.mkdir(exist_ok=True)
source.write_text('extern "C" int kb_written_one() { return 1; }\n')
cpp_extension.load(name="kb_written_sources", sources=[str(source)], is_python_module=False)


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
