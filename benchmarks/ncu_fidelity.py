"""Fidelity of the timing engine: its per-call times against Nsight Compute's kernel durations.

Two passes over the same problems (reference models, the harness's inputs and engine):
  python benchmarks/ncu_fidelity.py time    OUT.json [--level 1] [--every 3]
      times each forward with the harness's engine (CUDA events, L2 flush, median), and counts
      the kernels one forward launches (torch.profiler);
  ncu --clock-control none --cache-control all --profile-from-start off \
      --metrics gpu__time_duration.sum --csv --page raw --print-units base --log-file NCU.csv \
      python benchmarks/ncu_fidelity.py profile OUT.json
      runs one forward per problem inside a profiler range, in the same order;
  python benchmarks/ncu_fidelity.py compare OUT.json NCU.csv
      splits Nsight Compute's kernel list by the counts and prints, per problem, the engine's
      median next to the sum of kernel durations, and the median absolute difference.
Only single-kernel problems say something about the timer itself; multi-kernel forwards also
include the gaps between kernels, which events count and kernel durations do not.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

from pytest_kernelbench.gpu import timing
from pytest_kernelbench.isolation import ncu
from pytest_kernelbench.precision import EXACT_FP32
from pytest_kernelbench.suite import loading
from pytest_kernelbench.suite.discovery import find_problems

SEED = 42
DEVICE = "cuda"


def selected(level: int, every: int, problems_dir: Path) -> list:
    return find_problems(problems_dir, (level,))[::every]


def setup(problem_path: Path):
    module = loading.import_file(problem_path, "kb_problem")
    init_args = loading.make_init_args(module, SEED, DEVICE)
    model = loading.build_model(module.Model, init_args, SEED, DEVICE, "train", EXACT_FP32)
    sets = [loading.make_inputs(module, SEED + k, DEVICE, EXACT_FP32) for k in range(3)]
    return model, sets


def time_pass(args) -> None:
    loading.apply(EXACT_FP32)
    rows = []
    for problem in selected(args.level, args.every, Path(args.problems)):
        model, sets = setup(problem.path)
        side = timing.RotatingSide(model, sets, graph=False, device=DEVICE)
        measured = timing.measure_interleaved({"p": side.turn(timing.poison)}, DEVICE,
                                              budget_s=1.0, min_rounds=20, target_rse=0.002)
        launched = count_kernels(model, sets[0])
        median = timing.summarize(measured.samples_s["p"]).median_s
        rows.append({"key": problem.key, "path": str(problem.path), "median_s": median,
                     "kernels": launched})
        print(f"{problem.key:55s} {median * 1e6:10.2f} us  {launched} kernel(s)", flush=True)
        del model, sets, side
    Path(args.out).write_text(json.dumps(rows, indent=1))


def count_kernels(model, inputs) -> int:
    import torch
    from torch.profiler import ProfilerActivity, profile

    timing.forward_async(model, inputs)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        timing.forward_async(model, inputs)
        torch.cuda.synchronize()
    return sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA
               and "Memcpy" not in e.name and "Memset" not in e.name)


def profile_pass(args) -> None:
    import torch

    loading.apply(EXACT_FP32)
    for row in json.loads(Path(args.out).read_text()):
        model, sets = setup(Path(row["path"]))
        timing.forward_async(model, sets[0])  # warm: lazy initialisation stays outside the range
        torch.cuda.synchronize()
        torch.cuda.profiler.start()
        timing.forward_async(model, sets[0])
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()
        del model, sets


def compare(args) -> None:
    rows = json.loads(Path(args.out).read_text())
    durations = [k["duration_s"] for k in ncu.parse(Path(args.ncu).read_text(), [])
                 if k["duration_s"] is not None and "Memcpy" not in k["kernel"]
                 and "Memset" not in k["kernel"]]
    single, every = [], []
    cursor = 0
    print(f"{'problem':55s} {'engine us':>10s} {'ncu us':>10s} {'diff %':>8s} kernels")
    for row in rows:
        part = durations[cursor:cursor + row["kernels"]]
        cursor += row["kernels"]
        if len(part) < row["kernels"]:
            print(f"{row['key']:55s} missing from the Nsight Compute log")
            continue
        ncu_s = sum(part)
        diff = (row["median_s"] - ncu_s) / ncu_s * 100
        print(f"{row['key']:55s} {row['median_s'] * 1e6:10.2f} {ncu_s * 1e6:10.2f} {diff:8.2f} "
              f"{row['kernels']}")
        every.append(abs(diff))
        if row["kernels"] == 1 and ncu_s >= 10e-6:
            single.append(abs(diff))
    if cursor != len(durations):
        print(f"warning: {len(durations)} kernels in the log, {cursor} expected")
    for label, values in (("single-kernel problems >= 10 us", single), ("all problems", every)):
        if values:
            print(f"{label}: median |diff| {statistics.median(values):.2f}% "
                  f"(n={len(values)}, max {max(values):.2f}%)")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["time", "profile", "compare"])
    parser.add_argument("out")
    parser.add_argument("ncu", nargs="?")
    parser.add_argument("--problems", default="problems")
    parser.add_argument("--level", type=int, default=1)
    parser.add_argument("--every", type=int, default=3)
    args = parser.parse_args(argv)
    {"time": time_pass, "profile": profile_pass, "compare": compare}[args.mode](args)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
