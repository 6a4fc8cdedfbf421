"""Cold and warm builds of a folder of CUDA candidates, against single builds.

    python benchmarks/build_bench.py OUTDIR [--count 16] [--singles 2]

Writes `count` distinct load_inline CUDA candidates (one elementwise kernel each, for level-1
activation problems) to OUTDIR/cuda_set, then measures
  - single builds: `singles` of them built one at a time into an empty cache;
  - cold: `pytest -m kb_compile` on the whole set with an empty build cache (builds in parallel,
    --kb-build-jobs defaults to the CPU count);
  - warm: the same command again.
and prints the wall times, with the target cold <= 1.5 * (mean single * count / cores).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

PROBLEMS = ["19_ReLU", "20_LeakyReLU", "21_Sigmoid", "22_Tanh", "23_Softmax", "24_LogSoftmax",
            "25_Swish", "26_GELU_", "27_SELU_", "28_HardSigmoid", "29_Softplus", "30_Softsign",
            "31_ELU", "32_HardTanh", "88_MinGPTNewGelu", "20_LeakyReLU"]
TEMPLATE = '''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SOURCE = r"""
#include <torch/extension.h>

__global__ void apply(const float* x, float* y, long n) {{
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) {{ float v = x[i]; y[i] = {expression}; }}
}}

torch::Tensor run(torch::Tensor x) {{
    auto in = x.contiguous();
    auto out = torch::empty_like(in);
    long n = in.numel();
    apply<<<(n + 255) / 256, 256>>>(in.data_ptr<float>(), out.data_ptr<float>(), n);
    return out;
}}
"""

ext = load_inline(name="bench_{index}", cpp_sources="torch::Tensor run(torch::Tensor x);",
                  cuda_sources=CUDA_SOURCE, functions=["run"])


class ModelNew(nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x, *rest):
        return ext.run(x)
'''


def write_set(folder: Path, count: int) -> list[Path]:
    files = []
    for index in range(count):
        problem = PROBLEMS[index % len(PROBLEMS)]
        path = folder / "level1" / f"{problem.split('_')[0]}" / f"s{index}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        # Each file differs (its constant), so each is a build of its own.
        path.write_text(TEMPLATE.format(expression=f"v > 0.0f ? v : {index + 1}.0e-3f * v",
                                        index=index))
        files.append(path)
    return files


def timed(command: list[str], env: dict, log: Path) -> float:
    started = time.perf_counter()
    with open(log, "w") as out:
        subprocess.run(command, env=env, stdout=out, stderr=subprocess.STDOUT, check=False)
    return time.perf_counter() - started


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--count", type=int, default=16)
    parser.add_argument("--singles", type=int, default=2)
    args = parser.parse_args(argv)
    out = Path(args.out).resolve()
    folder = out / "cuda_set"
    shutil.rmtree(folder, ignore_errors=True)
    files = write_set(folder, args.count)
    arch = os.environ.get("TORCH_CUDA_ARCH_LIST", "9.0")
    env = {**os.environ, "TORCH_CUDA_ARCH_LIST": arch}
    singles = []
    for index, path in enumerate(files[:args.singles]):
        single_env = {**env, "TORCH_EXTENSIONS_DIR": str(out / f"single-{index}"),
                      "CUDA_VISIBLE_DEVICES": ""}
        shutil.rmtree(out / f"single-{index}", ignore_errors=True)
        seconds = timed([sys.executable, "-m", "pytest_kernelbench.building.process", str(path)], single_env,
                        out / f"single-{index}.log")
        singles.append(seconds)
        print(f"single build {index}: {seconds:.1f} s", flush=True)
    cache = out / "build-cache"
    shutil.rmtree(cache, ignore_errors=True)
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-m", "kb_compile",
               "--kb-device=cuda", f"--kb-candidates={folder}", f"--kb-build-cache={cache}",
               "--kb-level=1", "--kb-report=none"]
    cold = timed(command, env, out / "cold.log")
    warm = timed(command, env, out / "warm.log")
    cores = os.cpu_count() or 1
    ideal = statistics_mean(singles) * args.count / cores
    print(f"{args.count} candidates, {cores} cores: cold run {cold:.1f} s, warm run {warm:.1f} s")
    print(f"mean single build {statistics_mean(singles):.1f} s -> sum/cores {ideal:.1f} s; "
          f"cold/ideal {cold / ideal:.2f} (target <= 1.5)")
    for name in ("cold", "warm"):
        lines = (out / f"{name}.log").read_text().splitlines()
        progress = [line for line in lines if line.startswith("kernelbench:")]
        tail = [line for line in lines if " passed" in line or " failed" in line][-1:]
        print(f"{name}: " + (progress[0] if progress else "no builds") + " | "
              + (progress[-1] if len(progress) > 1 else "") + " | " + " ".join(tail))
    return 0


def statistics_mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
