"""What the build process of a CUDA run shows a candidate in place of the GPU it builds for.

The build process sees no GPU (a build needs none), but generated code often reaches its
`load_inline` only after asking for one: `if torch.cuda.is_available()`, a capability check, a
`torch.cuda.Stream()` made in `__init__`, `if x.is_cuda` and an output made with
`device=x.device` at the first call. Without stand-ins such a candidate builds in its compile
or correctness item, one at a time, where a cold run spent 32-74 s on each of five CUDA-L1
candidates (docs/gpu-runs.md). Nothing here runs on a GPU and nothing measured depends on it:
what needs a real GPU after the build fails harmlessly, the first call stops once its build is
over (process.first_call), and the items judge the candidate on the GPU.
"""

from __future__ import annotations

import contextlib
import functools
import os
from typing import Any


class _Placeholder:
    """A CUDA stream or event that is made and waited on, and never runs anything."""

    def __init__(self, *args: Any, **kwargs: Any):
        pass

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return lambda *args, **kwargs: None


def pretend_cuda() -> None:
    """Let the candidate believe in the GPU this process builds for: one device, of the
    capability `TORCH_CUDA_ARCH_LIST` names first ("9.0"), whose streams and events can be made
    and waited on."""
    import torch

    arch = os.environ.get("TORCH_CUDA_ARCH_LIST", "").split(";")[0].split()[0:1]
    major, _, minor = (arch[0] if arch else "0.0").partition(".")
    capability = (int(major) if major.isdigit() else 0, int(minor[:1]) if minor[:1].isdigit() else 0)
    stand_ins = {
        "is_available": lambda: True, "device_count": lambda: 1, "current_device": lambda: 0,
        "get_device_capability": lambda device=None: capability,
        "Stream": _Placeholder, "Event": _Placeholder,
        "current_stream": lambda device=None: _Placeholder(),
        "default_stream": lambda device=None: _Placeholder(),
        "stream": lambda stream=None: contextlib.nullcontext(),
        "synchronize": lambda device=None: None, "set_device": lambda device: None,
        "empty_cache": lambda: None,
    }
    for name, stand_in in stand_ins.items():
        setattr(torch.cuda, name, stand_in)


def seems_cuda(tensor):
    """The tensor, saying it is on the GPU (generated code often builds only `if x.is_cuda`)."""
    return tensor.as_subclass(_seems_cuda_type())


@functools.cache
def _seems_cuda_type() -> type:
    import torch

    class SeemsCuda(torch.Tensor):
        @property
        def is_cuda(self):
            return True

        @property
        def device(self):
            return torch.device("cuda", 0)

    return SeemsCuda


def _names_cuda(value: Any) -> bool:
    import torch

    if isinstance(value, torch.device):
        return value.type == "cuda"
    if isinstance(value, str):
        return value.startswith("cuda")
    return isinstance(value, int) and not isinstance(value, bool)  # a device index


def cuda_on_cpu():
    """A torch function mode under which what a call asks of the GPU happens on the CPU:
    a `device=` naming CUDA becomes the CPU, and `.cuda()`, `.to('cuda')` and `.pin_memory()`
    leave the tensor where it is. For the first call of a CUDA run's build process, so that
    the code before a build (an output made on the input's device) runs on to it."""
    import torch
    from torch.overrides import TorchFunctionMode

    staying = {torch.Tensor.cuda, torch.Tensor.pin_memory}

    class CudaOnCpu(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = dict(kwargs or {})
            if func in staying:
                return args[0]
            if _names_cuda(kwargs.get("device")):
                kwargs["device"] = "cpu"
            if func is torch.Tensor.to:
                args = (args[0], *("cpu" if _names_cuda(a) else a for a in args[1:]))
            return func(*args, **kwargs)

    return CudaOnCpu()
