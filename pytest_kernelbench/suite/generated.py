"""Candidate sets made from the problems themselves, so that they can never drift from them.

- reference: every problem's eager Model, renamed ModelNew. It calibrates the harness: correct
  by construction, its speedups must sit near 1.0.
- torch_compile: every problem's own Model under torch.compile (default mode), as ModelNew: the
  bar a hand-written kernel has to clear to be worth writing.
- cuda_epilogue: every problem's own Model followed by a CUDA kernel of its own, built with
  `load_inline` at import (as generated candidates build theirs) and copying each float32
  output: honest, correct and a little slower than eager, with a distinct source per problem,
  so that a run of it costs what scoring a model's extensions costs in builds (CUDA only).
- cpp_epilogue: the same with a C++ extension copying each float32 output on the CPU (on a GPU
  it builds and passes outputs through): the build-heavy set a CPU can run, to measure the
  build pool, the precompiled header and warm runs without a GPU.

`--kb-candidates=builtin:NAME` judges one of them: cached_set writes it once per content of the
problems folder and generator, and the run reads it like any other folder. write_set writes one
where a person can read or edit it (tools/make_candidate_sets.py).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

PREFIX = "builtin:"
_MODEL_NAME = re.compile(r"\bModel\b")
_COMPILED = '''

class ModelNew(nn.Module):
    """The problem's own Model under torch.compile: built with the same arguments, so it draws
    the same weights, and compiled at its first call."""

    def __init__(self, *args):
        super().__init__()
        self.compiled = torch.compile(Model(*args))

    def forward(self, *inputs):
        return self.compiled(*inputs)
'''


def reference_source(problem_source: str, relative_name: str) -> str:
    """The candidate that is the problem's own eager Model under the name ModelNew."""
    header = (f"# Calibration candidate generated from problems/{relative_name} by "
              "tools/make_candidate_sets.py: the eager reference, renamed ModelNew.\n")
    return header + _MODEL_NAME.sub("ModelNew", problem_source)


def compile_source(problem_source: str, relative_name: str) -> str:
    """The problem's source followed by a ModelNew that compiles the problem's Model."""
    header = (f"# Generated from problems/{relative_name} by tools/make_candidate_sets.py: "
              "the problem's Model under torch.compile.\n")
    return header + problem_source.rstrip("\n") + "\n" + _COMPILED


_EPILOGUE = '''

import torch
from torch.utils.cpp_extension import load_inline

_EPILOGUE_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

// The epilogue of {relative}: a copy of each float32 output, on the caller's stream.
__global__ void {kernel}(const float* __restrict__ in, float* __restrict__ out, long n) {{
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i];
}}

torch::Tensor epilogue(torch::Tensor x) {{
    auto in = x.contiguous();
    auto out = torch::empty_like(in);
    long n = in.numel();
    if (n > 0) {{
        {kernel}<<<(n + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
            in.data_ptr<float>(), out.data_ptr<float>(), n);
    }}
    return out;
}}
"""

_epilogue = load_inline(name="{kernel}", cpp_sources="torch::Tensor epilogue(torch::Tensor x);",
                        cuda_sources=_EPILOGUE_CUDA, functions=["epilogue"],
                        extra_cuda_cflags=["-O3"])
'''

_CPP_EPILOGUE = '''

import torch
from torch.utils.cpp_extension import load_inline

_EPILOGUE_CPP = r"""
#include <torch/extension.h>

// The epilogue of {relative}: a copy of each float32 output, on the CPU.
torch::Tensor epilogue(torch::Tensor x) {{
    auto in = x.contiguous();
    auto out = torch::empty_like(in);
    const float* src = in.data_ptr<float>();
    float* dst = out.data_ptr<float>();
    at::parallel_for(0, in.numel(), 1 << 16, [&](int64_t begin, int64_t end) {{
        for (int64_t i = begin; i < end; ++i) dst[i] = src[i];
    }});
    return out;
}}
"""

_epilogue = load_inline(name="{kernel}", cpp_sources=_EPILOGUE_CPP, functions=["epilogue"],
                        extra_cflags=["-O3"])
'''

# Runs each float32 output of the device type through the extension's copy.
_EPILOGUE_CALL = '''

def _through_epilogue(value):
    if (isinstance(value, torch.Tensor) and value.device.type == "{device}"
            and value.dtype == torch.float32):
        return _epilogue.epilogue(value)
    if isinstance(value, (tuple, list)):
        return type(value)(_through_epilogue(v) for v in value)
    return value


class ModelNew(Model):
    """The problem's own Model (same arguments, same weights), then the epilogue."""

    def forward(self, *inputs):
        return _through_epilogue(super().forward(*inputs))
'''


def _with_epilogue(problem_source: str, relative_name: str, language: str) -> str:
    prefix = "kb_epilogue_" if language == "CUDA" else "kb_cpp_epilogue_"
    kernel = prefix + re.sub(r"\W", "_", relative_name.removesuffix(".py"))
    template, device = (_EPILOGUE, "cuda") if language == "CUDA" else (_CPP_EPILOGUE, "cpu")
    header = (f"# Generated from problems/{relative_name} by tools/make_candidate_sets.py: "
              f"the problem's Model, then a {language} copy kernel built with load_inline.\n")
    return (header + problem_source.rstrip("\n") + "\n"
            + template.format(relative=relative_name, kernel=kernel)
            + _EPILOGUE_CALL.format(device=device))


def epilogue_source(problem_source: str, relative_name: str) -> str:
    """The problem's source followed by a ModelNew that runs the problem's Model, then a CUDA
    kernel of its own named after the problem."""
    return _with_epilogue(problem_source, relative_name, "CUDA")


def cpp_epilogue_source(problem_source: str, relative_name: str) -> str:
    """The same with a C++ extension of its own, copying float32 outputs on the CPU."""
    return _with_epilogue(problem_source, relative_name, "C++")


SETS: dict[str, Callable[[str, str], str]] = {"reference": reference_source,
                                               "torch_compile": compile_source,
                                               "cuda_epilogue": epilogue_source,
                                               "cpp_epilogue": cpp_epilogue_source}


def unknown_set_message(name: str) -> str:
    known = ", ".join(PREFIX + known for known in SETS)
    return f"no built-in candidate set {name!r}; the built-in sets are {known}"


def problem_files(problems_dir: Path) -> list[Path]:
    return sorted(problems_dir.glob("level*/*.py"))


def set_files(problems_dir: Path, name: str) -> dict[Path, str]:
    """Relative path -> text of each candidate of the set, one per problem file."""
    make = SETS[name]
    files = {}
    for path in problem_files(problems_dir):
        relative = path.relative_to(problems_dir)
        files[relative] = make(path.read_text(encoding="utf-8"), relative.as_posix())
    return files


def write_set(problems_dir: Path, name: str, out_dir: Path) -> int:
    """Writes the set into out_dir, removing candidates whose problem is gone; returns the
    number of candidates written."""
    files = set_files(problems_dir, name)
    for stale in out_dir.glob("level*/*.py"):
        if stale.relative_to(out_dir) not in files:
            stale.unlink()
    for relative, text in files.items():
        target = out_dir / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return len(files)


def content_key(problems_dir: Path) -> str:
    """A digest of this generator's own source and of every problem file (path and bytes): the
    same key means the same generated files."""
    digest = hashlib.sha256(Path(__file__).read_bytes())
    for path in problem_files(problems_dir):
        digest.update(path.relative_to(problems_dir).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:24]


def cached_set(problems_dir: Path, name: str, cache_root: Path) -> Path:
    """The set's folder under cache_root, written unless an identical one is there already. The
    folder is named after the set, since a set's name is its folder's."""
    folder = cache_root / content_key(problems_dir) / name
    if folder.is_dir():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    # Written aside and renamed into place, so that a folder under its final name is complete
    # even when several processes (xdist workers) generate the same set at once.
    staging = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=folder.parent))
    try:
        staging.chmod(0o755)  # mkdtemp's folder is private; the set is no secret
        write_set(problems_dir, name, staging)
        os.rename(staging, folder)
    except OSError:
        if not folder.is_dir():
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return folder
