"""A case that fits the card alone, judged while another judging process's paused worker holds
much of the device's memory: its `out_of_memory` must not stand.

    python benchmarks/neighbour_worker_memory.py PROBLEM CANDIDATE [--hold-gib 40]

A neighbour process opens a Session on the same GPU and judges a candidate of level1/19_ReLU
whose model keeps a buffer of --hold-gib GiB; its worker stays paused with the buffer, as a
pytest worker's does between stages. This process then judges PROBLEM with CANDIDATE (pick one
that passes alone but not beside the buffer: CUDA-L1's level-2 problem 34 on an 80 GB card).
Prints the free memory before, the case's status, its memory record and out-of-memory flags,
and whether the neighbour's worker was stopped. Exit status 1 on an `out_of_memory` verdict
given while the neighbour's worker still held its buffer.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from memory_verdicts import gib  # benchmarks/, this script's folder

ROOT = Path(__file__).resolve().parents[1]

HOG = textwrap.dedent('''
    import torch
    import torch.nn as nn


    class ModelNew(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("kept", torch.empty({size}, dtype=torch.uint8, device={device!r}))

        def forward(self, x):
            return torch.relu(x)
''')

# The neighbour: judges the hog, says so, keeps its session (and its worker) until told, then
# says whether its worker is still the one that held the buffer.
NEIGHBOUR = textwrap.dedent('''
    import sys
    from pytest_kernelbench import Session
    problem, candidate, device = sys.argv[1:4]
    quick = {} if device.startswith("cuda") else {"trials": 2, "time_budget_s": 0.05}
    with Session(device=device, **quick) as session:
        record = session.evaluate(problem, candidate)
        worker = session.evaluator.sandbox.child_pid
        print("neighbour:", record["status"], "worker", worker, flush=True)
        sys.stdin.readline()
        now = session.evaluator.sandbox.child_pid
        print("neighbour: worker", "stopped" if now != worker else "still loaded", flush=True)
''')


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("problem", type=Path)
    parser.add_argument("candidate", type=Path)
    parser.add_argument("--hold-gib", type=float, default=40.0)
    parser.add_argument("--device", default="cuda", help="cpu: a dry run of the plumbing")
    parser.add_argument("--beside", type=Path, default=ROOT / "problems" / "level1" / "19_ReLU.py",
                        help="the problem the neighbour judges (a ReLU of level 1)")
    args = parser.parse_args()
    import torch

    from pytest_kernelbench import Session

    scratch = Path(tempfile.mkdtemp(prefix="kb-neighbour-"))
    hog = scratch / "hog.py"
    hog.write_text(HOG.format(size=int(args.hold_gib * 2**30), device=args.device))
    neighbour = subprocess.Popen(
        [sys.executable, "-c", NEIGHBOUR, str(args.beside),
         str(hog), args.device], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert neighbour.stdin is not None and neighbour.stdout is not None
    try:
        line = neighbour.stdout.readline().strip()
        print(line)
        if args.device.startswith("cuda"):
            free, total = torch.cuda.mem_get_info(args.device)
            print(f"free beside the neighbour's paused worker: {gib(free)} of {gib(total)} GiB")
        started = time.perf_counter()
        quick = {} if args.device.startswith("cuda") else {"trials": 2, "time_budget_s": 0.05}
        with Session(device=args.device, **quick) as session:
            record = session.evaluate(args.problem, args.candidate)
        print(f"case: {record['status']} in {time.perf_counter() - started:.1f} s, "
              f"speedup {record.get('speedup')}")
        memory = record.get("memory") or {}
        print("  memory:", {key: (gib(value) if key.endswith("bytes") else value)
                            for key, value in memory.items()})
        for flag in record.get("flags") or []:
            if "memory" in flag:
                print("  flag:", flag[:240])
        neighbour.stdin.write("\n")
        neighbour.stdin.flush()
        said = neighbour.stdout.readline().strip()
        print(said)
    finally:
        neighbour.kill()
        neighbour.wait()
    held_on = "still loaded" in said
    return 1 if record["status"] == "out_of_memory" and held_on else 0


if __name__ == "__main__":
    sys.exit(main())
