"""Kernel attribution read from a CUDA graph, beside a profiler session, on real candidates.

  python benchmarks/attribution_check.py OUT.jsonl --problems DIR --candidates DIR
        [--level 1,2,3] [-k SUBSTRING ...] [--jobs 8]

For every candidate, in a fresh process (as the harness's worker is): import and build it,
construct it and its reference on the GPU, make one warm call of each, then read the names of
the kernels one call launches twice: from a CUDA graph (kernels.captured_kernels) and from a
profiler session (kernels.profiled_kernels, the first in that process, so it pays CUPTI's start
as the worker does). One JSON line per candidate: seconds of each method on the candidate, the
names each found, and whether the verdict the harness draws (custom kernels against the
reference's) is the same. The last line printed sums it up.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path


def check_one(problem_path: str, candidate_path: str) -> dict:
    import torch

    from pytest_kernelbench import kernels, loading
    from pytest_kernelbench.timing import forward_async

    device = "cuda"
    problem = loading.import_file(Path(problem_path), "kb_problem")
    started = time.perf_counter()
    candidate = loading.import_file(Path(candidate_path), "kb_candidate")
    init = loading.make_init_args(problem, 0, device)
    model = loading.build_model(candidate.ModelNew, init, 0, device, "eval")
    reference = loading.build_model(problem.Model, init, 0, device, "eval")
    inputs = loading.make_inputs(problem, 1, device)
    other = loading.make_inputs(problem, 2, device)
    row: dict = {"load_s": time.perf_counter() - started}
    for name, net in (("candidate", model), ("reference", reference)):
        forward_async(net, inputs)
        torch.cuda.synchronize()
        began = time.perf_counter()
        row[f"{name}_graph"] = kernels.captured_kernels(net, inputs, other, device)
        row[f"{name}_graph_s"] = time.perf_counter() - began
    for name, net in (("candidate", model), ("reference", reference)):
        began = time.perf_counter()
        row[f"{name}_profiler"] = kernels.profiled_kernels(
            lambda n=net: forward_async(n, inputs), device)
        row[f"{name}_profiler_s"] = time.perf_counter() - began
    source = Path(candidate_path).read_text(errors="replace")
    # what the name rule alone (before the source test) called the candidate's own
    row["unnamed_in_source"] = [
        name for name in row["candidate_profiler"] if name not in row["reference_profiler"]
        and not kernels.LIBRARY_KERNEL.search(name)
        and not kernels.custom_kernels([name], [], source)]
    if row["candidate_graph"] is not None and row["reference_graph"] is not None:
        by_graph = kernels.custom_kernels(row["candidate_graph"], row["reference_graph"], source)
        by_profiler = kernels.custom_kernels(row["candidate_profiler"],
                                             row["reference_profiler"], source)
        row.update(custom_by_graph=by_graph, custom_by_profiler=by_profiler,
                   same_names=row["candidate_graph"] == row["candidate_profiler"],
                   same_verdict=bool(by_graph) == bool(by_profiler))
    return row


def pairs(problems: Path, candidates: Path, levels: list[int], keys: list[str]) -> list[tuple]:
    from pytest_kernelbench import discovery

    found = discovery.find_problems(problems, levels)
    cases = discovery.pair(found, {"set": discovery.find_candidates(candidates)})
    named = [(f"level{c.problem.level}/{c.problem.path.stem}", c) for c in cases
             if c.candidate is not None]
    return [(str(c.problem.path), str(c.candidate.path), name) for name, c in named
            if not keys or any(k in name for k in keys)]


def run_child(problem: str, candidate: str, case_id: str, scratch: Path, timeout_s: float) -> dict:
    env = {**os.environ, "TORCH_EXTENSIONS_DIR": str(scratch / Path(candidate).stem)}
    try:
        done = subprocess.run([sys.executable, __file__, "--one", problem, candidate], env=env,
                              capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return {"case": case_id, "error": f"no answer within {timeout_s:g} s"}
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        tail = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        return {"case": case_id, "error": tail[:300]}
    return {"case": case_id, **json.loads(lines[-1])}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", nargs="?")
    parser.add_argument("--one", nargs=2, metavar=("PROBLEM", "CANDIDATE"))
    parser.add_argument("--problems", type=Path, default=Path("problems"))
    parser.add_argument("--candidates", type=Path)
    parser.add_argument("--level", default="1,2,3")
    parser.add_argument("-k", action="append", default=[])
    parser.add_argument("--jobs", type=int, default=8)
    parser.add_argument("--timeout", type=float, default=300)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(check_one(*args.one)))
        return 0
    todo = pairs(args.problems, args.candidates, [int(x) for x in args.level.split(",")], args.k)
    with tempfile.TemporaryDirectory() as scratch, ThreadPoolExecutor(args.jobs) as pool:
        rows = list(pool.map(lambda t: run_child(*t, Path(scratch), args.timeout), todo))
    Path(args.out).write_text("".join(json.dumps(row) + "\n" for row in rows))
    judged = [r for r in rows if "same_verdict" in r]
    uncaptured = [r for r in rows if "error" not in r and "same_verdict" not in r]
    broken = [r for r in rows if "error" in r]
    graph_s = sorted(r["candidate_graph_s"] for r in judged)
    profiler_s = sorted(r["candidate_profiler_s"] for r in rows if "error" not in r)
    for row in judged:
        if not row["same_verdict"]:
            print(f"differs: {row['case']}: graph {row['custom_by_graph']} profiler "
                  f"{row['custom_by_profiler']}")
    for row in rows:
        if row.get("unnamed_in_source"):
            print(f"not own (no source names them): {row['case']}: {row['unnamed_in_source']}")
    for row in uncaptured:
        print(f"not captured: {row['case']}")
    for row in broken:
        print(f"error: {row['case']}: {row['error']}")

    def median(values: list[float]) -> str:
        return f"{values[len(values) // 2]:.3f}" if values else "-"

    print(f"{len(rows)} candidates: {len(judged)} read from a graph "
          f"({sum(r['same_verdict'] for r in judged)} same verdict as the profiler, "
          f"{sum(r['same_names'] for r in judged)} same names), {len(uncaptured)} not capturable, "
          f"{len(broken)} failed to run; candidate seconds: graph median {median(graph_s)} max "
          f"{graph_s[-1] if graph_s else 0:.3f}, profiler median {median(profiler_s)} max "
          f"{profiler_s[-1] if profiler_s else 0:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
