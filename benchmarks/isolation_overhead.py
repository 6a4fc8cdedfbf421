"""What isolation costs per item: a trivial candidate judged in-process versus in the sandbox.

    python benchmarks/isolation_overhead.py [--device cpu|cuda] [--candidates N]

With isolation, each candidate gets a fresh worker forked from the zygote (which imported torch
once) and the compile and correctness stages go through it. Without, the same steps run in this
process. Prints the median milliseconds per candidate for both.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from pytest_kernelbench.judge.evaluation import Evaluator
from pytest_kernelbench.precision import EXACT_FP32
from pytest_kernelbench.settings import Settings
from pytest_kernelbench.suite import correctness, discovery, loading

EXAMPLES = Path(__file__).resolve().parents[1] / "tests" / "examples"
PROBLEM = EXAMPLES / "problems" / "level1" / "2_ReLU.py"
CANDIDATE = EXAMPLES / "candidates" / "good" / "level1" / "2_ReLU.py"


def candidate_set(root: Path, count: int) -> Path:
    """count copies of the trivial candidate, as samples of one problem."""
    folder = root / "trivial" / "level1" / "2_ReLU"
    folder.mkdir(parents=True)
    for index in range(count):
        shutil.copy(CANDIDATE, folder / f"copy{index:03d}.py")
    return root / "trivial"


def with_isolation(set_dir: Path, device: str, trials: int) -> list[float]:
    settings = Settings(problems_dir=EXAMPLES / "problems", candidate_dirs=(set_dir,),
                        levels=(1,), trials=trials, device=device)
    problems = [p for p in discovery.find_problems(settings.problems_dir, (1,))
                if p.path == PROBLEM]
    cases = discovery.pair(problems, {"trivial": discovery.find_candidates(set_dir)})
    evaluator = Evaluator(settings, device)
    times = []
    try:
        evaluator.correct(cases[0])  # starts the zygote: paid once per run, not per item
        for case in cases[1:]:
            started = time.perf_counter()
            outcome = evaluator.correct(case)
            times.append(time.perf_counter() - started)
            assert outcome.passed, outcome.message
    finally:
        evaluator.close()
    return times


def without_isolation(set_dir: Path, device: str, trials: int) -> list[float]:
    problem = loading.import_file(PROBLEM, "bench_problem")
    init_args = loading.make_init_args(problem, 42, device)
    reference = loading.build_model(problem.Model, init_args, 42, device, "train", EXACT_FP32)
    times = []
    for path in sorted(set_dir.glob("level1/2_ReLU/*.py"))[1:]:
        started = time.perf_counter()
        module = loading.import_file(path, "bench_candidate")
        model = loading.build_model(module.ModelNew, init_args, 42, device, "train", EXACT_FP32)
        for trial in range(trials):
            inputs = loading.make_inputs(problem, 1000 + trial, device, EXACT_FP32)
            verdict = correctness.compare(reference(*inputs), model(*loading.clone_inputs(inputs)),
                                          1e-2, 1e-2)
            assert verdict.passed
        loading.synchronize(device)
        times.append(time.perf_counter() - started)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--candidates", type=int, default=21)
    parser.add_argument("--trials", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        set_dir = candidate_set(Path(tmp), args.candidates)
        isolated = with_isolation(set_dir, args.device, args.trials)
        inline = without_isolation(set_dir, args.device, args.trials)
    print(f"device {args.device}, {len(isolated)} candidates, compile + {args.trials} "
          "correctness trials each (median ms per candidate)")
    print(f"  in the sandbox (fresh forked worker): {statistics.median(isolated) * 1e3:8.1f} ms")
    print(f"  in-process, no isolation:             {statistics.median(inline) * 1e3:8.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
