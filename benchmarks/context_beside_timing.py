"""Whether CUDA contexts made beside a timing disturb it: the question to answer before a
candidate's worker is started ahead of its stage, outside the device lock.

  python benchmarks/context_beside_timing.py [--repeats N] [--budget SECONDS] [--starters K]
        [--device cuda]   (cpu: a smoke test of the script; no context is made)

A worker's start is mostly its CUDA context (1.06 s at the median in a CUDA-L1 run at -n 8,
docs/performance.md), made under the shared device lock, so a timing waits for it. Here the
models of launch_bound_timing.py are timed against themselves as the worker times them, once on
a quiet GPU and once while K processes make CUDA contexts over and over as worker starts do
(each a child forked from a process that imported torch, its first allocation on the GPU, then
exit). Identical sides must read 1.00 in both conditions; the medians and their spread say
whether the contexts moved them.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import time

import torch
from launch_bound_timing import Chain, measure


def make_contexts(device: str, go, stop, made) -> None:
    """Fork a child that makes a CUDA context and exits, again and again, between go and stop."""
    go.wait()
    while not stop.is_set():
        pid = os.fork()
        if pid == 0:
            try:
                torch.zeros(1, device=device)
                if device != "cpu":
                    torch.cuda.synchronize()
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
        with made.get_lock():
            made.value += 1


def time_cases(repeats: int, budget_s: float, device: str) -> list[str]:
    cases = {"3 ops": (Chain(3), 1 << 16), "30 ops": (Chain(30), 1 << 16),
             "3 ops on 64M floats": (Chain(3), 1 << 26)}
    lines = []
    for name, (model, size) in cases.items():
        ratios, medians, spreads = [], [], []
        for _ in range(repeats):
            stats, ratio = measure(model, model, size, budget_s, device)
            ratios.append(ratio)
            medians.append(stats["baseline"].median_s)
            spreads.append(stats["baseline"].median_s / stats["baseline"].min_s)
        lines.append(f"{name:20} speedups {min(ratios):.3f}-{max(ratios):.3f}; baseline median "
                     f"{statistics.median(medians) * 1e6:.1f} us, {statistics.median(spreads):.2f}x "
                     f"its minimum")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--budget", type=float, default=0.3)
    parser.add_argument("--starters", type=int, default=4)
    parser.add_argument("--device", default="cuda")
    args = parser.parse_args()
    # The starters fork before this process touches CUDA: a process forked after it may not.
    fork = multiprocessing.get_context("fork")
    go, stop, made = fork.Event(), fork.Event(), fork.Value("i", 0)
    starters = [fork.Process(target=make_contexts, args=(args.device, go, stop, made), daemon=True)
                for _ in range(args.starters)]
    for starter in starters:
        starter.start()
    for line in time_cases(args.repeats, args.budget, args.device):
        print(f"quiet    {line}")
    go.set()
    began = time.perf_counter()
    lines = time_cases(args.repeats, args.budget, args.device)
    elapsed = time.perf_counter() - began
    stop.set()
    for starter in starters:
        starter.join()
    for line in lines:
        print(f"contexts {line}")
    print(f"{made.value} contexts made by {args.starters} processes in {elapsed:.1f} s beside "
          f"the timings ({made.value / elapsed:.1f} a second)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
