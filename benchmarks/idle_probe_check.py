"""Whether devices.wait_for_idle waits for work another process left queued on the GPU.

  python benchmarks/idle_probe_check.py [--device cuda]   (cpu: a smoke test of the script)

With --kb-drain=stop a timing takes its GPU while the workers sharing it are stopped in
mid-request, perhaps with work still queued, and waits_for_idle is what stands between that
work and the timing. Here a child process queues one kind of work and then waits for it (as a
stopped worker's queue runs on without its host), telling this process when the work ended;
this process asks wait_for_idle at once. It must return after the child's work ended, never
before: each line prints how long after (negative: before, the probe failed).

  matmuls  40 products of 8192x8192 floats (most of a second of large kernels)
  small    20000 spin kernels of about 25 us (a queue of tiny kernels, as deep as CUDA lets it)
  long     one spin kernel of about half a second (the GPU shared only by time slices)
  quiet    nothing queued: what the probe costs on an idle GPU
"""

from __future__ import annotations

import argparse
import multiprocessing
import time

import torch

from pytest_kernelbench.gpu.devices import wait_for_idle


def queue_work(kind: str, device: str, queued, finished) -> None:
    """Queue the work, say so, wait for it to run, and send the time it ended."""
    if kind == "matmuls":
        a = torch.randn(8192, 8192, device=device)
        work = lambda: [a @ a for _ in range(40)]  # noqa: E731
    elif device == "cpu":  # no spin kernel on a CPU
        work = lambda: time.sleep(0.5)  # noqa: E731
    elif kind == "small":
        work = lambda: [torch.cuda._sleep(50_000) for _ in range(20000)]  # noqa: E731
    else:
        work = lambda: torch.cuda._sleep(1_000_000_000)  # noqa: E731
    if device != "cpu":
        torch.cuda.synchronize()
    work()
    queued.set()
    if device != "cpu":
        torch.cuda.synchronize()
    finished.put(time.time())


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    fork = multiprocessing.get_context("spawn")  # a child with a CUDA context of its own
    torch.zeros(1, device=args.device)  # this process's own context, made before the tries
    early = 0
    for kind in ("matmuls", "small", "long"):
        for _ in range(args.repeats):
            queued, finished = fork.Event(), fork.Queue()
            child = fork.Process(target=queue_work, args=(kind, args.device, queued, finished))
            child.start()
            queued.wait()
            idle = wait_for_idle(args.device)
            returned = time.time()
            ended = finished.get(timeout=120)
            child.join()
            early += returned < ended
            print(f"{kind:8} idle={idle} returned {(returned - ended) * 1e3:+8.2f} ms after the "
                  "child's work ended")
    for _ in range(args.repeats):
        began = time.perf_counter()
        idle = wait_for_idle(args.device)
        print(f"quiet    idle={idle} in {(time.perf_counter() - began) * 1e3:.3f} ms")
    if early:
        print(f"wait_for_idle returned before the other process's work ended {early} times")
    return 1 if early and args.device != "cpu" else 0


if __name__ == "__main__":
    raise SystemExit(main())
