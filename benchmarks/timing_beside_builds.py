"""Whether a timing beside running builds reads what it reads alone, once the builds have cores
of their own: the measurement to make before builds stop pausing for timings.

  python benchmarks/timing_beside_builds.py [--repeats N] [--budget SECONDS]
        [--reserved K] [--device cuda]   (cpu: a smoke test of the script)

Launch-bound eager models (launch_bound_timing.py's chains, each side against itself) are timed
as the worker times them, in three conditions:
- quiet: nothing else runs;
- shared: C++ compilers of a torch extension, one a core, at the build pool's niceness, on
  every core (as builds ran before they were paused for timings);
- reserved: nothing else runs, this process (all its threads) on K reserved cores;
- split: compilers on the other cores, this process on the K reserved cores alone.
Each line gives the baseline's median and its ratio to the quiet median; identical sides must
read a speedup of 1.00. Builds may stop pausing for timings only where `split` reads as `quiet`
within the device's resolution. The compilers' throughput in each condition is printed too:
what the reserved cores cost the builds.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

import torch
from launch_bound_timing import Chain, measure
from torch.utils import cpp_extension

from pytest_kernelbench.building.builds import BUILD_NICENESS

SOURCE = """#include <torch/extension.h>
torch::Tensor twice(torch::Tensor x) { return x * 2; }
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("twice", &twice); }
"""


def compile_command(folder: Path) -> list[str]:
    """One compile of a small torch extension's C++ file: most of its time is torch's headers,
    as in a model-written extension's build."""
    source = folder / "ext.cpp"
    source.write_text(SOURCE)
    includes = [f"-I{path}" for path in cpp_extension.include_paths()]
    includes.append(f"-I{sysconfig.get_paths()['include']}")
    return ["c++", "-O2", "-std=c++17", "-fPIC", "-DTORCH_EXTENSION_NAME=ext", *includes,
            "-c", str(source), "-o", str(folder / "ext.o")]


def pin_process(cores: set[int]) -> None:
    """Every thread of this process onto cores (a thread's affinity is its own), and torch's
    intra-op pool sized to them: a pool of more threads than cores, spinning, ran a 3-op
    chain on the CPU 300 times slower."""
    for task in os.listdir("/proc/self/task"):
        try:
            os.sched_setaffinity(int(task), cores)
        except (ProcessLookupError, PermissionError):
            pass  # a thread that just ended
    torch.set_num_threads(len(cores))


class Compilers:
    """`count` loops of compiles, each pinned to `cores` (or free), at the pool's niceness."""

    def __init__(self, count: int, cores: set[int] | None, scratch: Path):
        self.done = 0
        self.loops = []
        for index in range(count):
            folder = scratch / f"c{index}"
            folder.mkdir(exist_ok=True)
            command = " ".join(compile_command(folder))
            script = f"while true; do {command} >/dev/null 2>&1 && echo done; done"
            self.loops.append(subprocess.Popen(
                ["bash", "-c", script], stdout=subprocess.PIPE, text=True,
                preexec_fn=lambda: self._enter(cores), start_new_session=True))
        self.began = time.perf_counter()

    @staticmethod
    def _enter(cores: set[int] | None) -> None:
        os.nice(BUILD_NICENESS)
        if cores is not None:
            os.sched_setaffinity(0, cores)

    def stop(self) -> float:
        """Stop every loop; compiles finished a minute, over all loops."""
        elapsed = max(time.perf_counter() - self.began, 1e-9)
        for loop in self.loops:
            os.killpg(loop.pid, signal.SIGKILL)
        finished = 0
        for loop in self.loops:
            out, _ = loop.communicate()
            finished += out.count("done")
        return finished * 60 / elapsed


def time_cases(repeats: int, budget_s: float, device: str) -> dict[str, float]:
    """Each case's baseline median (s) over the repeats, and prints their speedups."""
    cases = {"3 ops": (Chain(3), 1 << 16), "30 ops": (Chain(30), 1 << 16)}
    medians = {}
    for name, (model, size) in cases.items():
        ratios, times = [], []
        for _ in range(repeats):
            stats, ratio = measure(model, model, size, budget_s, device)
            ratios.append(ratio)
            times.append(stats["baseline"].median_s)
        medians[name] = statistics.median(times)
        print(f"    {name:8} speedups {min(ratios):.3f}-{max(ratios):.3f}, baseline median "
              f"{medians[name] * 1e6:.1f} us", flush=True)
    return medians


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--budget", type=float, default=0.3)
    parser.add_argument("--reserved", type=int, default=2, help="cores kept for the timing")
    parser.add_argument("--warmup", type=float, default=20.0,
                        help="seconds the compilers run before the timings start")
    parser.add_argument("--device", default="cuda")
    args = parser.parse_args()
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) <= args.reserved:
        sys.exit(f"--reserved {args.reserved}: this process may use only {len(cores)} cores")
    reserved, rest = set(cores[:args.reserved]), set(cores[args.reserved:])
    torch.zeros(1, device=args.device)  # the context (CUDA) before any timing
    print(f"{len(cores)} cores; reserved for the timing: {sorted(reserved)}", flush=True)
    print("quiet", flush=True)
    quiet = time_cases(args.repeats, args.budget, args.device)
    with tempfile.TemporaryDirectory(prefix="kb-beside-builds-") as scratch:
        for condition, count, compiler_cores, own in (
                ("shared", len(cores), None, set(cores)),
                ("reserved", 0, rest, reserved),
                ("split", len(rest), rest, reserved)):
            pin_process(own)
            compilers = Compilers(count, compiler_cores, Path(scratch))
            time.sleep(args.warmup if count else 0)
            print(f"{condition}: {count} compilers" + (f" on cores {sorted(rest)}"
                                                       if compiler_cores and count else "")
                  + f", this process on cores {sorted(own)}", flush=True)
            medians = time_cases(args.repeats, args.budget, args.device)
            rate = compilers.stop()
            print("    against quiet: " + ", ".join(
                f"{name} {medians[name] / quiet[name]:.2f}x" for name in quiet)
                + f"; compiles finished {rate:.1f} a minute", flush=True)
    pin_process(set(cores))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
