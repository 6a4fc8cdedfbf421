"""Per build: plain `load_inline` against the harness's build process, one build at a time, and
whether both give the same extension.

    python benchmarks/build_help.py OUTDIR [--problems DIR] [--count 3] [--candidates FILE...]
                                    [--threads] [--device cuda|cpu]

Candidates: a generated set's for the first `count` level-1 problems (every problem's Model,
then a load_inline kernel of its own: cuda_epilogue, or cpp_epilogue with --device cpu), or
the files named with --candidates (their problems found in --problems by the upstream file name
`level_<L>_problem_<P>_...` or a `level<L>/<P>_...` path). With --device cpu (C++ extensions
only), the outputs are the CPU's. For each, one at a time on an
otherwise idle host:
  - plain: a fresh process imports the candidate (plain load_inline; ninja runs as many jobs
    as it likes);
  - helped: the harness's build process (`python -m pytest_kernelbench.building.process`), with
    the precompiled torch header of its compile command made beforehand (its own time printed
    once) and MAX_JOBS at the host's cores; with --threads, also with nvcc's --threads 0 through
    NVCC_APPEND_FLAGS (a variant, not the harness's default).
Then, per candidate: the C++ object byte for byte, the CUDA kernels' machine code
(`cuobjdump -sass`), and on the GPU the extension modules' functions and the model's outputs on
one seeded draw, bitwise, each build loaded in a process of its own.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from build_bench import timed  # noqa: E402  (this folder, first on sys.path)

from pytest_kernelbench.building import pch  # noqa: E402
from pytest_kernelbench.suite import generated  # noqa: E402

UPSTREAM_NAME = re.compile(r"level_(\d+)_problem_(\d+)_|level(\d+)/(\d+)_")


def candidates(args) -> list[tuple[Path, Path]]:
    """(candidate, problem) pairs."""
    problems = sorted(args.problems.glob("level*/*.py"))
    if not args.candidates:
        name = "cpp_epilogue" if args.device == "cpu" else "cuda_epilogue"
        folder = generated.cached_set(args.problems, name, args.out / "sets")
        chosen = [p for p in problems if p.parent.name == "level1"][:args.count]
        return [(folder / p.relative_to(args.problems), p) for p in chosen]
    pairs = []
    for path in args.candidates:
        found = UPSTREAM_NAME.search(path.resolve().as_posix())
        level, number = [g for g in found.groups() if g is not None]  # type: ignore[union-attr]
        problem = next(p for p in problems if p.parent.name == f"level{level}"
                       and p.name.split("_")[0] == number)
        pairs.append((path.resolve(), problem))
    return pairs


def ninja_steps(folder: Path) -> str:
    steps = {}
    for log in folder.rglob(".ninja_log"):
        for line in log.read_text().splitlines()[1:]:
            start, end, _, output, _ = line.split("\t")
            steps[output] = (int(end) - int(start)) / 1000
    return " ".join(f"{name} {seconds:.1f}" for name, seconds in sorted(steps.items()))


def sass(path: Path) -> str:
    """The machine code of an object's kernels, without the lines that name files."""
    done = subprocess.run(["cuobjdump", "-sass", str(path)], capture_output=True, text=True)
    return "\n".join(line for line in done.stdout.splitlines()
                     if "Fatbin" not in line and "code for" not in line and "identifier" not in line)


def same_objects(plain: Path, helped: Path) -> str:
    cxx = [a.read_bytes() == b.read_bytes()  # gcc's output is reproducible
           for a, b in zip(sorted(plain.rglob("main.o")), sorted(helped.rglob("main.o")))]
    cuda = [sass(a) == sass(b) and bool(sass(a).strip())
            for a, b in zip(sorted(plain.rglob("*.cuda.o")), sorted(helped.rglob("*.cuda.o")))]
    return (f"C++ objects equal {sum(cxx)}/{len(cxx)}, "
            f"CUDA kernels' SASS equal {sum(cuda)}/{len(cuda)}")


def outputs(candidate: Path, problem: Path, folder: Path, out: Path, base: dict,
            device: str) -> dict:
    """Load the candidate from one build folder in a fresh process; its modules' functions and
    its model's output on one seeded draw."""
    code = f"""
import json, sys, torch
from pathlib import Path
from pytest_kernelbench import precision
from pytest_kernelbench.suite import loading
folder = Path({str(folder)!r})
module = loading.import_file(Path({str(candidate)!r}), "kb_check")
problem = loading.import_file(Path({str(problem)!r}), "kb_problem")
numerics = precision.EXACT_FP32
device = {device!r}
model = loading.build_model(module.ModelNew, loading.make_init_args(problem, 0, device), 0, device,
                            "eval", numerics)
with torch.no_grad():
    result = model(*loading.make_inputs(problem, 0, device, numerics))
loading.synchronize(device)
values = result if isinstance(result, (tuple, list)) else [result]
torch.save([v.detach().cpu() if isinstance(v, torch.Tensor) else v for v in values],
           {str(out)!r})
# torch loads an extension without putting it in sys.modules: look in the candidate's globals
extensions = [value for value in vars(module).values() if isinstance(value, type(sys))
              and str(getattr(value, "__file__", "") or "").startswith(str(folder))]
functions = sorted(f"{{ext.__name__}}.{{attr}}" for ext in extensions
                   for attr in dir(ext) if not attr.startswith("_"))
print(json.dumps(functions))
"""
    env = {**base, "TORCH_EXTENSIONS_DIR": str(folder)}  # the builds' arch list: no rebuild
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    lines = done.stdout.strip().splitlines()
    return {"functions": json.loads(lines[-1]) if done.returncode == 0 and lines else None,
            "error": done.stderr.strip().splitlines()[-1:] if done.returncode else None}


def bitwise_equal(a: Path, b: Path) -> bool:
    import torch

    left, right = torch.load(a), torch.load(b)
    return len(left) == len(right) and all(
        (x.dtype == y.dtype and x.shape == y.shape and torch.equal(
            x.reshape(-1).view(torch.uint8), y.reshape(-1).view(torch.uint8)))  # 0-dim too
        if isinstance(x, torch.Tensor) else x == y for x, y in zip(left, right))


def make_header(pairs, out: Path) -> None:
    """The precompiled headers the helped builds use, made before any is timed."""
    started = time.perf_counter()
    commands = pch.planned_commands([c.read_text() for c, _ in pairs], min_uses=1)
    pch.Headers(out / "pch", commands).wait()
    made = sum(pch.include_folder(out / "pch", c) is not None for c in commands)
    print(f"precompiled headers: {made} of {len(commands)} made in "
          f"{time.perf_counter() - started:.1f} s", flush=True)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--problems", type=Path, default=ROOT / "problems")
    parser.add_argument("--count", type=int, default=3)
    parser.add_argument("--candidates", type=Path, nargs="*")
    parser.add_argument("--threads", action="store_true")
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    args = parser.parse_args(argv)
    args.out = args.out.resolve()
    shutil.rmtree(args.out, ignore_errors=True)
    args.out.mkdir(parents=True)
    pairs = candidates(args)
    cores = str(os.cpu_count() or 1)
    base = {**os.environ, "TORCH_CUDA_ARCH_LIST": os.environ.get("TORCH_CUDA_ARCH_LIST", "9.0")}
    make_header(pairs, args.out)
    variants = {"plain": {}, "helped": {"MAX_JOBS": cores, pch.ROOT_ENV: str(args.out / "pch"),
                                        "CUDA_VISIBLE_DEVICES": ""}}
    if args.threads:
        variants["threads"] = {**variants["helped"], "NVCC_APPEND_FLAGS": "--threads 0"}
    for index, (candidate, problem) in enumerate(pairs):
        seconds = {}
        for name, extra in variants.items():
            folder = args.out / name / str(index)
            env = {**base, **extra, "TORCH_EXTENSIONS_DIR": str(folder)}
            command = [sys.executable, "-c", f"import runpy; runpy.run_path({str(candidate)!r})"] \
                if name == "plain" else \
                [sys.executable, "-m", "pytest_kernelbench.building.process", str(candidate)]
            seconds[name] = timed(command, env, args.out / f"{name}-{index}.log")
            print(f"{candidate.name} {name}: {seconds[name]:.1f} s ({ninja_steps(folder)})",
                  flush=True)
        ratio = " ".join(f"{n} {seconds['plain'] / s:.2f}x" for n, s in seconds.items() if n != "plain")
        print(f"{candidate.name}: plain/{ratio}", flush=True)
        plain, helped = args.out / "plain" / str(index), args.out / "helped" / str(index)
        print(f"{candidate.name}: {same_objects(plain, helped)}", flush=True)
        found = {name: outputs(candidate, problem, args.out / name / str(index),
                               args.out / f"{name}-{index}.pt", base, args.device)
                 for name in ("plain", "helped")}
        if found["plain"]["error"] or found["helped"]["error"]:
            alike = found["plain"]["error"] == found["helped"]["error"]
            print(f"{candidate.name}: {'both fail alike' if alike else 'they differ'}: "
                  f"{found['plain']['error']} / {found['helped']['error']}", flush=True)
            continue
        equal = found["plain"]["functions"] == found["helped"]["functions"] and \
            bitwise_equal(args.out / f"plain-{index}.pt", args.out / f"helped-{index}.pt")
        print(f"{candidate.name}: functions {found['plain']['functions']} / "
              f"{found['helped']['functions']}; outputs bitwise equal: {equal}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
