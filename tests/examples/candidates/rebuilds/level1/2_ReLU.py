import ctypes
import os
import shutil
from pathlib import Path

import _ctypes
import torch
import torch.nn as nn

# Stands in for generated code that writes its sources afresh at every import, so that
# torch.utils.cpp_extension (load_inline) sees them as new and builds its library again, with
# other bytes each time: here the "build" is a copy of a shared library with a new tail.
folder = Path(os.environ["TORCH_EXTENSIONS_DIR"]) / "kb_test_rebuilds"
folder.mkdir(parents=True, exist_ok=True)
library = folder / "kb_test_rebuilds.so"
shutil.copyfile(_ctypes.__file__, library)
with open(library, "ab") as tail:
    tail.write(os.urandom(16))
ctypes.CDLL(str(library))


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
