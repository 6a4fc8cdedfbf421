"""Attempts that build an extension, one at a time through `Session.evaluate` and all at once
through `Session.evaluate_many`: wall time and statuses.

    python benchmarks/api_batch.py [--count 4] [--device cpu] [--warm-header]

Each attempt is a distinct C++ `load_inline` ReLU (its extension named apart, so no two share
a build) against the suite's example ReLU problem; each side gets an empty build cache of its
own, so both build every attempt. --warm-header gives both caches the precompiled torch header
first (made once, outside the timing), as a machine that built before has it. Prints both
walls, their ratio (the target: evaluate_many at most 0.75x) and whether the statuses agree.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from pytest_kernelbench import Session
from pytest_kernelbench.building import builds, pch

ROOT = Path(__file__).resolve().parents[1]
PROBLEM = ROOT / "tests" / "examples" / "problems" / "level1" / "2_ReLU.py"
CANDIDATE = ROOT / "tests" / "examples" / "candidates" / "cpp_ext" / "level1" / "2_ReLU.py"
OPTIONS = {"trials": 2, "time_budget_s": 0.05, "p": 0.0}


def attempts(count: int) -> list[str]:
    source = CANDIDATE.read_text()
    return [source.replace("kb_test_cpu_relu", f"kb_bench_relu_{index}")
            for index in range(count)]


def with_header(cache: Path, made: Path | None) -> Path:
    """The cache, holding the precompiled header made once (a hard link), where there is one."""
    if made is not None:
        target = cache / builds.HEADERS_FOLDER / made.name
        target.mkdir(parents=True)
        (target / pch.HEADER.name).symlink_to((made / pch.HEADER).readlink())
        (target / pch.PRECOMPILED).hardlink_to(made / pch.PRECOMPILED)
    return cache


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=4)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--warm-header", action="store_true")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="kb-api-batch-"))
    made = None
    if args.warm_header:
        command = pch.torch_command([], with_cuda=False)
        if command is not None:
            pch.Headers(scratch / "headers", [command]).wait()
            made = pch.include_folder(scratch / "headers", command)
    sources = attempts(args.count)
    try:
        cache = with_header(scratch / "one", made)
        started = time.perf_counter()
        with Session(device=args.device, build_cache=cache, **OPTIONS) as session:
            alone = [session.evaluate(PROBLEM, source)["status"] for source in sources]
        one_s = time.perf_counter() - started

        cache = with_header(scratch / "many", made)
        started = time.perf_counter()
        together = [""] * len(sources)
        with Session(device=args.device, build_cache=cache, **OPTIONS) as session:
            for index, record in session.evaluate_many((PROBLEM, s) for s in sources):
                together[index] = record["status"]
        many_s = time.perf_counter() - started
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"{args.count} attempts on {args.device}"
          f"{' (torch header precompiled beforehand)' if args.warm_header else ''}")
    print(f"  evaluate, one after another: {one_s:.1f} s  statuses {alone}")
    print(f"  evaluate_many:               {many_s:.1f} s  statuses {together}")
    print(f"  ratio {many_s / one_s:.2f} (target <= 0.75); statuses equal: {alone == together}")


if __name__ == "__main__":
    main()
