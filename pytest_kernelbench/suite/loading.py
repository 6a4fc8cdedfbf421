"""Importing problem and candidate files, seeding, and building models and inputs from them.

Used on both sides of the sandbox: the pytest process builds references from problems, the worker
builds candidates. Every file is imported under its own module name, so a candidate that defines
its own shape constants, get_inputs or Model cannot change the problem it is judged on.
"""

from __future__ import annotations

import builtins
import dis
import hashlib
import importlib.util
import os
import random
import sys
from pathlib import Path
from types import CodeType, ModuleType
from typing import Any

from pytest_kernelbench.precision import Numerics


def import_file(path: Path, prefix: str, lives_in: Path | None = None,
                offered: dict[str, Any] | None = None) -> ModuleType:
    """Import path as a fresh module named <prefix>_<hash of path>, from its source.

    Never from a cached .pyc beside it: bytecode there could have been put by anyone who could
    write that folder, and it would run in place of the source that was read and hashed.
    With lives_in, the module's `__file__` is a copy of the file in that folder: a confined
    candidate that builds into a folder beside its own file (a common habit of generated code)
    then builds in its own writable folder, not in the candidate set. Tracebacks still name
    the original file. Names in offered are set in the module before the file runs.
    """
    name = module_name(path, prefix)
    origin = path
    if lives_in is not None:
        origin = lives_in / path.name
        origin.write_bytes(path.read_bytes())
    spec = importlib.util.spec_from_file_location(name, origin)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look modules up by name
    try:
        code = compile(path.read_bytes(), str(path), "exec", dont_inherit=True)
        module.__dict__.update(offered or {})
        exec(code, module.__dict__)  # noqa: S102 - running the file is the point
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def import_candidate(path: Path, prefix: str, lives_in: Path | None = None,
                     problem_path: Path | None = None,
                     build_directory: str | None = None) -> tuple[ModuleType, list[str]]:
    """Import a candidate file as upstream KernelBench sees it; also the names it took from
    outside itself, sorted.

    Upstream runs the problem file and then the candidate file in one namespace, after setting
    BUILD_DIRECTORY and prefixing the candidate with `import os`, so generated candidates come
    to use the problem's constants, helpers and imports without knowing it. Here a global the
    candidate reads and never binds itself is set before it runs: from a copy of the problem
    module imported for it (nothing the candidate does to those objects reaches the problem it
    is judged on), else from what upstream sets. Whatever the candidate binds wins, also where
    it binds at run time (a star import); Python's builtins are never replaced.
    """
    reads, binds = global_names(compile(path.read_bytes(), str(path), "exec", dont_inherit=True))
    # a module's own dunders (`__name__`) are set by the import, never taken from outside
    wanted = {name for name in reads - binds - set(vars(builtins)) if not name.startswith("__")}
    offered: dict[str, Any] = {}
    if wanted and problem_path is not None:
        problem = import_file(problem_path, f"{prefix}_problem")
        offered.update((key, value) for key, value in vars(problem).items()
                       if not key.startswith("__"))
    if wanted:
        offered.update(BUILD_DIRECTORY=build_directory or os.environ.get("TORCH_EXTENSIONS_DIR"),
                       os=os)
    offered = {key: value for key, value in offered.items() if key in wanted}
    module = import_file(path, prefix, lives_in, offered)
    return module, sorted(key for key, value in offered.items()
                          if vars(module).get(key) is value)


def global_names(code: CodeType) -> tuple[set[str], set[str]]:
    """(the names a module's code reads as globals, the names it binds as globals), over it
    and every function and class body in it. A class body's own assignments bind nothing
    global; a function's reads of its locals never count."""
    reads: set[str] = set()
    binds: set[str] = set()
    pending = [(code, True)]
    while pending:
        current, top = pending.pop()
        for instruction in dis.get_instructions(current):
            op = instruction.opname
            if op in ("LOAD_GLOBAL", "LOAD_NAME", "LOAD_FROM_DICT_OR_GLOBALS"):
                reads.add(str(instruction.argval).removesuffix(" + NULL"))
            elif op in ("STORE_GLOBAL", "DELETE_GLOBAL") \
                    or (top and op in ("STORE_NAME", "DELETE_NAME")):
                binds.add(str(instruction.argval))
        pending.extend((const, False) for const in current.co_consts
                       if isinstance(const, CodeType))
    return reads, binds


PROBLEM_NAMES = ("Model", "get_inputs", "get_init_inputs")


def problem_defect(path: Path) -> str | None:
    """Why a problem file cannot be evaluated, in one line, or None: it must import and define
    class Model, get_inputs() and get_init_inputs()."""
    try:
        module = import_file(path, "kb_problem_check")
    except SyntaxError as exc:
        return f"SyntaxError: {exc.msg} (line {exc.lineno})"
    except BaseException as exc:  # noqa: BLE001 - a problem file may raise anything on import
        return f"does not import: {type(exc).__name__}: {exc}"
    finally:
        sys.modules.pop(module_name(path, "kb_problem_check"), None)
    missing = [name for name in PROBLEM_NAMES if not callable(getattr(module, name, None))]
    if missing:
        return f"defines no {', '.join(missing)}"
    if not isinstance(module.Model, type):
        return "Model is not a class"
    return None


def module_name(path: Path, prefix: str) -> str:
    return f"{prefix}_{hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:12]}"


def apply(numerics: Numerics) -> None:
    """Set this process's TF32 switches to the run's policy, once, before any model is made.

    fp32 means fp32 unless TF32 is allowed: PyTorch keeps TF32 off for matmuls but cuDNN
    convolutions use it by default, which moves deep convolutional references far enough from
    fp64 that correct fp32 kernels would fail.
    """
    import torch

    torch.backends.cuda.matmul.allow_tf32 = numerics.tf32_allowed
    torch.backends.cudnn.allow_tf32 = numerics.tf32_allowed


def numerics_flags() -> dict[str, Any]:
    """torch's process-wide switches that change how fast (and how exactly) a model runs.
    Read right after apply, before any candidate code, they are what the baseline runs under:
    a candidate that flips them in its process (TF32, cuDNN's benchmark or deterministic modes)
    must not change how the baseline it is timed against runs."""
    import torch

    return {"matmul_tf32": torch.backends.cuda.matmul.allow_tf32,
            "cudnn_tf32": torch.backends.cudnn.allow_tf32,
            "cudnn_benchmark": torch.backends.cudnn.benchmark,
            "cudnn_deterministic": torch.backends.cudnn.deterministic,
            "matmul_precision": _matmul_precision()}


def apply_numerics_flags(flags: dict[str, Any]) -> None:
    import torch

    torch.backends.cuda.matmul.allow_tf32 = flags["matmul_tf32"]
    torch.backends.cudnn.allow_tf32 = flags["cudnn_tf32"]
    torch.backends.cudnn.benchmark = flags["cudnn_benchmark"]
    torch.backends.cudnn.deterministic = flags["cudnn_deterministic"]
    if flags["matmul_precision"] is not None:
        torch.set_float32_matmul_precision(flags["matmul_precision"])


def _matmul_precision() -> str | None:
    """torch's fp32 matmul precision; None where torch cannot say (newer torch refuses once
    its old and new switches were both used, as a candidate may do)."""
    import torch

    try:
        return torch.get_float32_matmul_precision()
    except RuntimeError:
        return None


def tf32_switched_on(numerics: Numerics) -> bool:
    """Whether anything in this process turned TF32 on where the policy keeps it off."""
    if numerics.tf32_allowed:
        return False  # allowed for both sides: nothing to tell apart
    flags = numerics_flags()
    return bool(flags["matmul_tf32"] or flags["cudnn_tf32"]
                or flags["matmul_precision"] not in ("highest", None))


def cast(values: list[Any], numerics: Numerics) -> list[Any]:
    """Floating tensors cast to the run's dtype (unchanged at fp32)."""
    import torch

    dtype = numerics.dtype
    if dtype is None:
        return values
    return [x.to(dtype) if isinstance(x, torch.Tensor) and x.is_floating_point() else x
            for x in values]


def seed_everything(seed: int) -> None:
    import numpy
    import torch

    random.seed(seed)
    numpy.random.seed(seed % 2**32)
    torch.manual_seed(seed)  # seeds every CUDA device too


def make_init_args(problem: ModuleType, seed: int, device: str) -> list[Any]:
    """The constructor's arguments, drawn on the CPU (as for the weights) and then moved."""
    import torch

    seed_everything(seed)
    args = list(problem.get_init_inputs())
    return [x.to(device) if isinstance(x, torch.Tensor) else x for x in args]


def make_inputs(problem: ModuleType, seed: int, device: str, numerics: Numerics) -> list[Any]:
    """The problem's inputs for one draw, made directly on the device and cast to the run's
    precision."""
    import torch

    seed_everything(seed)
    with torch.device(device):
        inputs = list(problem.get_inputs())
    return cast([x.to(device) if isinstance(x, torch.Tensor) else x for x in inputs], numerics)


def rng_states(device: str) -> list[bytes]:
    """The random generators' states that a forward on device can draw from."""
    import torch

    states = [torch.random.get_rng_state()]
    if device.startswith("cuda"):
        states.append(torch.cuda.get_rng_state(device))
    return [bytes(state.numpy()) for state in states]


def build_model(cls: type, init_args: list[Any], seed: int, device: str, mode: str,
                numerics: Numerics):
    """Seed, construct on the CPU, move to the device, cast to the run's precision, and put in
    eval or train mode.

    Weights are drawn from the CPU generator, as upstream KernelBench draws them: a candidate
    that makes its parameters another way (the legacy `torch.Tensor(...)` constructor, always
    on the CPU, initialised the way `nn.Linear` does) gets the reference's weights here exactly
    when it gets them there. Constructing under the device would draw the reference's weights
    from the device's generator instead, and fail such a candidate for weights, not for its
    kernel.
    """
    seed_everything(seed)
    model = cls(*init_args).to(device)
    if numerics.dtype is not None:  # floating parameters and buffers only
        model = model.to(numerics.dtype)
    model.train(mode == "train")
    return model


BASELINES = ("eager", "compile")


def as_baseline(model, baseline: str):
    """The model to time candidates against: eager as is, or 'compile[:mode]' for torch.compile."""
    import torch

    kind, _, compile_mode = baseline.partition(":")
    if kind == "eager":
        return model
    return torch.compile(model, mode=compile_mode or None)


def clone_inputs(inputs: list[Any]) -> list[Any]:
    import torch

    return [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]


def synchronize(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize(device)


def warm_libraries(device: str) -> None:
    """Create this process's cuBLAS and cuDNN handles before a candidate runs, as any process
    that ran its reference first has them: a candidate that captures a CUDA graph at its first
    call must not fail because a library made its handle inside the capture."""
    import torch

    if not device.startswith("cuda"):
        return
    with torch.no_grad():
        square = torch.ones(16, 16, device=device)
        torch.nn.functional.linear(square @ square, square, square[0])
        torch.nn.functional.conv2d(square.view(1, 1, 16, 16), square[:3, :3].reshape(1, 1, 3, 3))
    torch.cuda.synchronize(device)


# torch's CPU allocator backs blocks of 2 MB and more with transparent huge pages when this is
# set; it reads the variable once, at the process's first allocation. Without it glibc maps
# every large block afresh and the kernel faults it in 4 KB at a time, on both sides of a
# speedup alike: one eager forward of L1/100 on two cores took 367 ms without, 106 ms with.
HUGE_PAGES_VARIABLE = "THP_MEM_ALLOC_ENABLE"


def use_huge_pages() -> None:
    """Ask for huge pages in this process (if it has not allocated yet) and the processes it
    starts, unless the environment already says otherwise."""
    os.environ.setdefault(HUGE_PAGES_VARIABLE, "1")


def peak_device_bytes() -> int | None:
    """The most GPU memory this process's allocator has held at once (None without CUDA)."""
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_initialized():
        return None
    return int(torch.cuda.max_memory_reserved())


def reset_peak_device_bytes() -> None:
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        torch.cuda.reset_peak_memory_stats()


def release_cached_memory(keep_bytes: int = 0) -> None:
    """Give the GPU memory this process's allocator keeps cached back to the driver, so that
    processes sharing the GPU (xdist workers and their sandboxes) do not run each other out of
    memory with blocks none of them uses. Live tensors stay; a process without CUDA does nothing.
    With keep_bytes, a cache of at most that many unused bytes is kept."""
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_initialized():
        return
    if keep_bytes and torch.cuda.memory_reserved() - torch.cuda.memory_allocated() <= keep_bytes:
        return
    torch.cuda.empty_cache()
