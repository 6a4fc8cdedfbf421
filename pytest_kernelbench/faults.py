"""Status words and one-line messages for everything a candidate can do wrong. Pure functions."""

from __future__ import annotations

import re
import signal
import traceback

# Statuses of the compile stage.
SYNTAX_ERROR = "syntax_error"
IMPORT_ERROR = "import_error"
COMPILE_ERROR = "compile_error"
NO_MODEL_NEW = "no_model_new"
INIT_ERROR = "init_error"
# Statuses of any stage.
RUNTIME_ERROR = "runtime_error"
OUT_OF_MEMORY = "out_of_memory"
CUDA_ERROR = "cuda_error"
EXITED = "exited"
CRASHED = "crashed"
TIMEOUT = "timeout"
# Statuses of the correctness stage.
MISMATCH = "mismatch"
SHAPE_MISMATCH = "shape_mismatch"
DTYPE_MISMATCH = "dtype_mismatch"
STRUCTURE_MISMATCH = "structure_mismatch"
NAN_INF = "nan_inf"
MUTATED_INPUT = "mutated_input"
CHEAT = "cheat"
# Right when its work is waited for, wrong when the caller's stream is not (ordering.py).
RACE = "race"
# Of any stage: candidate code tried what its confinement refuses (confine.py).
SANDBOX_VIOLATION = "sandbox_violation"
# Statuses of the speed stage.
SLOWER = "slower"
TORCH_ONLY = "torch_only"
# Correct, but the harness's own clock could not confirm or refute the reported time (a busy
# host): no speedup, so it counts as correct and not fast.
INCONCLUSIVE = "inconclusive"
# The problem's fault, not the candidate's: its file does not load, lacks Model, get_inputs or
# get_init_inputs, or its reference fails. No candidate stage runs against it; not scored.
PROBLEM_ERROR = "problem_error"
# Not errors.
PASSED = "passed"
MISSING = "missing"
UNSUPPORTED_DEVICE = "unsupported_device"
# A case the run selected but stopped before it settled (interrupted, -x): not correct.
NOT_RUN = "not_run"

BUILD_FAILURE = re.compile(r"Error building extension|error: command .* failed|ninja: build stopped")
# Compiler diagnostics look like `file.cu(12): error: ...` or `file.cpp:6:22: error: ...`.
DIAGNOSTIC_LINE = re.compile(r"(:\d+(:\d+)?:|\(\d+\):) *(fatal )?error\b", re.IGNORECASE)
ERROR_LINE = re.compile(r"(\berror\b|\bError\b|fatal)", re.IGNORECASE)
NOISE_LINE = re.compile(r"ninja: build stopped|subprocess\.CalledProcessError|^\s*$|"
                        r"Error building extension|\s-MMD\s|\s-isystem\s")
# A CUDA library that could not allocate its workspace or handle: the device's memory ran out
# (cuBLAS's cublasCreate beside other processes), not a poisoned context.
LIBRARY_OUT_OF_MEMORY = re.compile(r"\b(CUBLAS|CUDNN|CUSOLVER|CUSPARSE)_STATUS_ALLOC_FAILED\b|"
                                   r"\bCUFFT_ALLOC_FAILED\b|CUDNN_STATUS_NOT_ENOUGH_MEMORY")
CUDA_FAILURE = re.compile(
    r"CUDA error|illegal memory access|device-side assert|unspecified launch failure|"
    r"CUDA_ERROR|cudaError|misaligned address|an illegal instruction"
)


def first_error_lines(text: str, limit: int = 6) -> str:
    """The compiler's first error lines, not the whole ninja transcript."""
    lines = [line.strip() for line in text.splitlines()]
    picked = [line for line in lines if DIAGNOSTIC_LINE.search(line)] or \
        [line for line in lines if ERROR_LINE.search(line) and not NOISE_LINE.search(line)]
    unique = list(dict.fromkeys(picked))[:limit]
    if unique:
        return "\n".join(unique)
    return lines[-1] if lines else ""


def one_line(text: str, limit: int = 300) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def describe_exception(exc: BaseException) -> str:
    return one_line(f"{type(exc).__name__}: {exc}")


def classify_exception(exc: BaseException, stage: str) -> str:
    """The status for an exception raised by candidate code in the given stage."""
    text = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, SystemExit):
        return EXITED
    if isinstance(exc, SyntaxError):
        return SYNTAX_ERROR
    if isinstance(exc, MemoryError) or "OutOfMemoryError" in type(exc).__name__ \
            or "out of memory" in text or "can't allocate memory" in text \
            or LIBRARY_OUT_OF_MEMORY.search(text):
        return OUT_OF_MEMORY
    if CUDA_FAILURE.search(text):
        return CUDA_ERROR
    if stage == "import":
        return COMPILE_ERROR if BUILD_FAILURE.search(text) else IMPORT_ERROR
    if stage == "init":
        return COMPILE_ERROR if BUILD_FAILURE.search(text) else INIT_ERROR
    return RUNTIME_ERROR


def exception_message(exc: BaseException, status: str) -> str:
    if status == COMPILE_ERROR:
        return "build failed: " + one_line(first_error_lines(str(exc)).replace("\n", " | "))
    if status == EXITED:
        return f"candidate called exit({exc.code!r})" if isinstance(exc, SystemExit) \
            else describe_exception(exc)
    return describe_exception(exc)


def candidate_traceback(exc: BaseException, candidate_path: str, limit: int = 20) -> str:
    """Traceback text, trimmed to the frames from the candidate's file when it has any."""
    if isinstance(exc, SyntaxError):  # its file, line and caret say where; no frame does
        return "".join(traceback.format_exception_only(type(exc), exc))
    frames = traceback.extract_tb(exc.__traceback__)
    own = [f for f in frames if f.filename == candidate_path]
    shown = traceback.format_list(own or frames[-3:])
    return "".join(shown[-limit:]) + "".join(traceback.format_exception_only(type(exc), exc))


def describe_exit(returncode: int) -> str:
    """'killed by SIGSEGV' or 'exit code 3' for a worker process that ended."""
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit code {returncode}"
