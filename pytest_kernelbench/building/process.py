"""The build process: `python -m pytest_kernelbench.building.process CANDIDATE [PROBLEM]`.

The build pool (pool.py) starts one per extension to build, with no GPU visible, confined
where the run confines, at a lower priority. It imports the candidate, which builds at import
as most generated candidates do; where that built nothing, it constructs the model on the CPU
with the problem's init inputs (a build in `__init__`); where that built nothing either, it
calls the model once on the problem's inputs (a build at the first call), stopping as soon as
a build is over. Whatever the candidate does after its build is left to its items.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from pathlib import Path

from pytest_kernelbench import confine, precision
from pytest_kernelbench.building import gpu_stand_ins, pch, sources
from pytest_kernelbench.building.builds import POLL_S, echo_build_errors
from pytest_kernelbench.suite import loading

FIRST_CALL_S = 20.0  # a first call on the CPU that reaches no build in this time builds nothing
# The build process makes its model and inputs at the problem's own dtype: they only have to
# reach the candidate's build, which its items then judge at the run's precision.
BUILD_NUMERICS = precision.EXACT_FP32


def construct(candidate_module, problem_path: Path):
    """Construct the candidate's model on the CPU with its problem's init inputs, so that a
    build in __init__ happens here, ahead, rather than in its compile item. Its failure
    (e.g. a .cuda() with no GPU visible) is not the build's: the item judges construction.
    Returns the model and the problem's module (None for what could not be made)."""
    cls = getattr(candidate_module, "ModelNew", None)
    if not isinstance(cls, type):
        return None, None
    problem = None
    try:
        problem = loading.import_file(problem_path, "kb_problem")
        model = loading.build_model(cls, loading.make_init_args(problem, 0, "cpu"), 0, "cpu", "eval",
                                    BUILD_NUMERICS)
        return model, problem
    except BaseException as exc:  # noqa: BLE001 - candidate code may raise anything
        print(f"constructing without a GPU: {type(exc).__name__}: {exc}", file=sys.stderr)
        return None, problem


class BuildReached(BaseException):
    """The first call's extension build is over: nothing of that call after it runs here.
    (A BaseException, so that a candidate's `except Exception` fallback does not catch it.)"""


def first_call(model, problem, seems_cuda: bool, limit_s: float = FIRST_CALL_S) -> None:
    """Call the model once on the CPU with its problem's inputs, to reach an extension that
    its forward builds at its first call (a lazily built module, a cached loader function).
    With seems_cuda (a CUDA run), the inputs say they are on the GPU and what the call asks of
    the GPU happens on the CPU (gpu_stand_ins): generated code often builds only `if x.is_cuda`,
    after making its output on the input's device.

    The call stops as soon as a build is over, successful or not, so no candidate work runs
    on the CPU after it; a call that builds nothing ends by itself or is cut off after
    limit_s (the process exits, and the build is left to its item)."""
    import threading

    import torch
    import torch.utils.cpp_extension as cpp_extension

    run = cpp_extension._run_ninja_build
    building = threading.Event()

    def stopping(*args, **kwargs):
        building.set()
        try:
            return run(*args, **kwargs)
        finally:
            raise BuildReached

    def watchdog() -> None:
        deadline = time.monotonic() + limit_s
        while building.is_set() or time.monotonic() < deadline:
            time.sleep(POLL_S)
        print(f"first call: nothing built within {limit_s:g} s", file=sys.stderr, flush=True)
        os._exit(0)

    torch.set_num_threads(1)  # beside other builds' compilers
    cpp_extension._run_ninja_build = stopping
    threading.Thread(target=watchdog, daemon=True).start()
    try:
        inputs = loading.make_inputs(problem, 0, "cpu", BUILD_NUMERICS)
        if seems_cuda:
            inputs = [gpu_stand_ins.seems_cuda(x) if isinstance(x, torch.Tensor) else x
                      for x in inputs]
        with torch.no_grad(), \
                gpu_stand_ins.cuda_on_cpu() if seems_cuda else contextlib.nullcontext():
            model(*inputs)
    except BuildReached:
        print("first call: built", file=sys.stderr)
    except BaseException as exc:  # noqa: BLE001 - candidate code may raise anything
        print(f"first call without a GPU: {type(exc).__name__}: {exc}", file=sys.stderr)
    finally:
        cpp_extension._run_ninja_build = run


def main(argv: list[str]) -> int:
    """Import one candidate file (argv[1]), which may build its extension; where it built
    nothing, construct its model with the init inputs of its problem (argv[2]); where that
    built nothing either, call it once on the problem's inputs."""
    policy = os.environ.get(confine.ENV_VAR)
    if policy:  # first, while this interpreter runs one thread and no candidate code
        applied = confine.enter(confine.Policy.from_json(policy))
        print(f"confinement: {applied.describe()}", file=sys.stderr)
    echo_build_errors()
    sources.keep_unchanged_sources()
    pch.use_for_builds()
    cuda_run = bool(os.environ.get("TORCH_CUDA_ARCH_LIST"))  # set for CUDA runs only
    if cuda_run:
        gpu_stand_ins.pretend_cuda()
    try:
        problem_path = Path(argv[2]) if len(argv) > 2 else None
        module, _ = loading.import_candidate(Path(argv[1]), "kb_build", confine.own_folder(), problem_path)
    except BaseException as exc:  # noqa: BLE001 - candidate code may raise anything
        print(f"build of {argv[1]} failed: {type(exc).__name__}: {exc}",
              file=sys.stderr)
        return 1
    folder = Path(os.environ.get("TORCH_EXTENSIONS_DIR", "."))
    if len(argv) > 2 and not any(folder.rglob("*.so")):
        model, problem = construct(module, Path(argv[2]))
        if model is not None and not any(folder.rglob("*.so")):
            first_call(model, problem, seems_cuda=cuda_run)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
