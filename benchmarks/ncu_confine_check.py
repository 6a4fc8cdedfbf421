"""Which confinement a process under Nsight Compute can run in: one candidate's call profiled
with the worker's policy, with the policy --kb-profile gives it, and unconfined.

  python benchmarks/ncu_confine_check.py PROBLEM CANDIDATE [--device cuda]

Prints one line per variant: the number of kernels read, or why none.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
import time
from pathlib import Path

from pytest_kernelbench.building import builds
from pytest_kernelbench.building.builds import cuda_arch
from pytest_kernelbench.isolation import ncu, wire
from pytest_kernelbench.isolation.sandbox import Sandbox
from pytest_kernelbench.settings import default_build_cache


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("problem", type=Path)
    parser.add_argument("candidate", type=Path)
    parser.add_argument("--device", default="cuda")
    args = parser.parse_args()
    arch = cuda_arch(args.device)
    folder = builds.build_folder(default_build_cache(), args.candidate.read_bytes(),
                                 builds.toolchain(arch))
    loading = wire.Loading(problem=str(args.problem.resolve()),
                           candidate=str(args.candidate.resolve()), seed=42, device="cuda:0",
                           mode="train", precision="fp32", tf32="off",
                           env=builds.build_env(folder, arch))
    request = wire.Ncu(loading, input_seed=1042)
    sandbox = Sandbox(device=args.device, confine_mode="auto")
    variants = {
        "worker policy": lambda scratch: dataclasses.replace(
            request, policy=sandbox.policy_of(loading, scratch).to_json()),
        "worker policy, network": lambda scratch: dataclasses.replace(
            request, policy=dataclasses.replace(sandbox.policy_of(loading, scratch),
                                                network=True).to_json()),
        "--kb-profile policy": lambda scratch: sandbox.profiled(request, scratch),
        "unconfined": lambda scratch: dataclasses.replace(request, policy=None),
    }
    try:
        for name, variant in variants.items():
            with tempfile.TemporaryDirectory(prefix="kb-ncu-check-") as scratch:
                started = time.perf_counter()
                kernels, why = ncu.profile(variant(Path(scratch)), sandbox.env, [], 300.0,
                                           Path(scratch))
                took = time.perf_counter() - started
            print(f"{name}: " + (f"{len(kernels)} kernels" if kernels else f"none: {why}")
                  + f" ({took:.1f} s)")
    finally:
        sandbox.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
