"""What makes a worker's CUDA context slow to make while other workers use the GPU.

  python benchmarks/context_start_cost.py [--loaders K] [--starts N] [--device cuda]

A worker's start is mostly its CUDA context: 0.2 s on a quiet H200, 1.0-1.2 s at the median
while seven other workers share the device (docs/performance.md). Here a process that imported
torch (as the sandbox's zygote does) forks children that each make a context and time it, N
times on a quiet GPU and N times beside K processes doing one kind of work each:

  kernels  large matrix products, one after another
  allocs   allocations of 256 MiB given straight back to the driver (empty_cache)
  contexts processes that make a context and exit, over and over
  cpu      pure Python loops (the cores busy, the GPU idle)
  syncs    small kernels, each followed by a synchronize (the host spins on the device)
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import time

import torch


def start_one(device: str) -> float:
    """Fork a child that makes a CUDA context as a worker's start does; seconds it took."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        began = time.perf_counter()
        try:
            probe = torch.arange(64, dtype=torch.float32, device=device)
            if device != "cpu":  # cpu: a smoke test of the script
                torch.cuda.get_device_properties(probe.device)
                torch.cuda.synchronize()
            os.write(write, repr(time.perf_counter() - began).encode())
        finally:
            os._exit(0)
    os.close(write)
    answer = os.read(read, 64)
    os.close(read)
    os.waitpid(pid, 0)
    return float(answer)


def synchronize(device: str) -> None:
    if device != "cpu":
        torch.cuda.synchronize()


def load(kind: str, device: str, stop) -> None:
    if kind == "contexts":
        while not stop.is_set():
            start_one(device)
        return
    if kind == "cpu":
        while not stop.is_set():
            sum(range(100_000))
        return
    if kind == "kernels":
        a = torch.randn(4096, 4096, device=device)
        while not stop.is_set():
            a @ a
            synchronize(device)
    elif kind == "allocs":
        while not stop.is_set():
            block = torch.empty(256 << 20, dtype=torch.uint8, device=device)
            del block
            if device != "cpu":
                torch.cuda.empty_cache()
    elif kind == "syncs":
        x = torch.ones(1024, device=device)
        while not stop.is_set():
            x.add_(1)
            synchronize(device)


def starts(n: int, device: str) -> str:
    seconds = sorted(start_one(device) for _ in range(n))
    return f"median {statistics.median(seconds):.3f} s, max {seconds[-1]:.3f} s"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--loaders", type=int, default=7)
    parser.add_argument("--starts", type=int, default=8)
    parser.add_argument("--device", default="cuda")
    args = parser.parse_args()
    fork = multiprocessing.get_context("fork")  # before this process touches CUDA
    print(f"quiet                 {starts(args.starts, args.device)}")
    for kind in ("kernels", "allocs", "contexts", "cpu", "syncs"):
        stop = fork.Event()
        loaders = [fork.Process(target=load, args=(kind, args.device, stop), daemon=True)
                   for _ in range(args.loaders)]
        for loader in loaders:
            loader.start()
        time.sleep(3.0)  # the loaders' own contexts are made
        print(f"beside {args.loaders} x {kind:8} {starts(args.starts, args.device)}")
        stop.set()
        for loader in loaders:
            loader.join(timeout=30)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
