"""Kernel attribution read from a CUDA graph and from a CUPTI trace, beside a profiler session.

  python benchmarks/attribution_check.py OUT.jsonl --problems DIR --candidates DIR
        [--level 1,2,3] [-k SUBSTRING ...] [--jobs 8]

For every candidate, in a fresh process (as the harness's worker is): import and build it,
construct it and its reference on the GPU, make one warm call of each, then read the names of
the kernels one call launches three times: from a CUDA graph (kernels.captured_kernels), from a
CUPTI trace (cupti.traced_kernels, the first in that process, so it pays CUPTI's start as the
worker does) and from a profiler session (kernels.profiled_kernels). One JSON line per
candidate: seconds of each method on the candidate, the names each found, and whether the
verdict the harness draws (custom kernels against the reference's) is the profiler's. A
candidate whose source says `# expect kernels: own` (or `torch-only`) is checked against that.
The last lines printed sum it up.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

EXPECT_KERNELS = re.compile(r"^#\s*expect kernels:\s*(own|torch-only)", re.MULTILINE)


def check_one(problem_path: str, candidate_path: str) -> dict:
    import torch

    from pytest_kernelbench.gpu import cupti, kernels
    from pytest_kernelbench.gpu.timing import forward_async
    from pytest_kernelbench.precision import EXACT_FP32
    from pytest_kernelbench.suite import loading

    device = "cuda"
    problem = loading.import_file(Path(problem_path), "kb_problem")
    started = time.perf_counter()
    candidate = loading.import_file(Path(candidate_path), "kb_candidate")
    init = loading.make_init_args(problem, 0, device)
    model = loading.build_model(candidate.ModelNew, init, 0, device, "eval", EXACT_FP32)
    reference = loading.build_model(problem.Model, init, 0, device, "eval", EXACT_FP32)
    inputs = loading.make_inputs(problem, 1, device, EXACT_FP32)
    other = loading.make_inputs(problem, 2, device, EXACT_FP32)
    row: dict = {"load_s": time.perf_counter() - started}
    for name, net in (("candidate", model), ("reference", reference)):
        forward_async(net, inputs)
        torch.cuda.synchronize()
        began = time.perf_counter()
        row[f"{name}_graph"] = kernels.captured_kernels(net, inputs, other, device)
        row[f"{name}_graph_s"] = time.perf_counter() - began
    for name, net in (("candidate", model), ("reference", reference)):
        began = time.perf_counter()
        try:
            row[f"{name}_cupti"] = cupti.traced_kernels(
                lambda n=net: forward_async(n, inputs), device)
        except cupti.CuptiError as exc:
            row[f"{name}_cupti"], row["cupti_error"] = None, str(exc)
        row[f"{name}_cupti_s"] = time.perf_counter() - began
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
    by_profiler = kernels.custom_kernels(row["candidate_profiler"], row["reference_profiler"],
                                         source)
    row["custom_by_profiler"] = by_profiler
    # the harness reads the reference from a graph (its eager ops can always be captured)
    baseline = row["reference_graph"] if row["reference_graph"] is not None \
        else row["reference_profiler"]
    if row["candidate_graph"] is not None:
        by_graph = kernels.custom_kernels(row["candidate_graph"], baseline, source)
        row.update(custom_by_graph=by_graph,
                   same_names=row["candidate_graph"] == row["candidate_profiler"],
                   same_verdict=bool(by_graph) == bool(by_profiler))
    if row["candidate_cupti"] is not None:
        by_cupti = kernels.custom_kernels(row["candidate_cupti"], baseline, source)
        row.update(custom_by_cupti=by_cupti,
                   cupti_same_names=row["candidate_cupti"] == without_copies(
                       row["candidate_profiler"]),
                   cupti_same_verdict=bool(by_cupti) == bool(by_profiler))
    expected = EXPECT_KERNELS.search(source)
    if expected:
        row["expected_kernels"] = expected.group(1)
    return row


def without_copies(profiled: list[str]) -> list[str]:
    """The profiler's names less its copies and fills, which CUPTI's kernel records omit."""
    return [name for name in profiled if not name.startswith(("Memcpy", "Memset"))]


def unexpected(row: dict) -> list[str]:
    """How the answers of a candidate that says what it launches disagree with it."""
    wanted = row.get("expected_kernels")
    if wanted is None:
        return []
    wrong = []
    for method in ("graph", "cupti", "profiler"):
        found = row.get(f"custom_by_{method}")
        if found is not None and bool(found) != (wanted == "own"):
            wrong.append(f"{method} found {found or 'none of its own'}")
    return wrong


def pairs(problems: Path, candidates: Path, levels: list[int], keys: list[str]) -> list[tuple]:
    from pytest_kernelbench.suite import discovery

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
    traced = [r for r in rows if "cupti_same_verdict" in r]
    uncaptured = [r for r in rows if "error" not in r and "same_verdict" not in r]
    broken = [r for r in rows if "error" in r]
    graph_s = sorted(r["candidate_graph_s"] for r in judged)
    cupti_s = sorted(r["candidate_cupti_s"] for r in traced)
    again_s = sorted(r["reference_cupti_s"] for r in traced)
    profiler_s = sorted(r["candidate_profiler_s"] for r in rows if "error" not in r)
    for row in judged:
        if not row["same_verdict"]:
            print(f"differs: {row['case']}: graph {row['custom_by_graph']} profiler "
                  f"{row['custom_by_profiler']}")
    for row in traced:
        if not row["cupti_same_verdict"]:
            print(f"differs: {row['case']}: cupti {row['custom_by_cupti']} profiler "
                  f"{row['custom_by_profiler']}")
    for row in rows:
        if row.get("unnamed_in_source"):
            print(f"not own (no source names them): {row['case']}: {row['unnamed_in_source']}")
        if unexpected(row):
            print(f"unexpected: {row['case']} expects {row['expected_kernels']}: "
                  f"{'; '.join(unexpected(row))}")
        if row.get("cupti_error"):
            print(f"cupti error: {row['case']}: {row['cupti_error']}")
    for row in uncaptured:
        print(f"not captured: {row['case']}: cupti {row.get('custom_by_cupti')} "
              f"({row.get('candidate_cupti_s', 0):.3f} s)")
    for row in broken:
        print(f"error: {row['case']}: {row['error']}")

    def median(values: list[float]) -> str:
        return f"{values[len(values) // 2]:.3f}" if values else "-"

    def most(values: list[float]) -> str:
        return f"{values[-1]:.3f}" if values else "-"

    expecting = [r for r in rows if "expected_kernels" in r]
    print(f"{len(expecting)} candidates say what they launch: "
          f"{sum(not unexpected(r) for r in expecting)} answered as they say")
    print(f"{len(rows)} candidates: {len(traced)} traced by CUPTI "
          f"({sum(r['cupti_same_verdict'] for r in traced)} same verdict as the profiler, "
          f"{sum(r['cupti_same_names'] for r in traced)} same names); CUPTI seconds: first "
          f"trace in a process median {median(cupti_s)} max {most(cupti_s)}, second median "
          f"{median(again_s)} max {most(again_s)}")
    print(f"{len(rows)} candidates: {len(judged)} read from a graph "
          f"({sum(r['same_verdict'] for r in judged)} same verdict as the profiler, "
          f"{sum(r['same_names'] for r in judged)} same names), {len(uncaptured)} not capturable, "
          f"{len(broken)} failed to run; candidate seconds: graph median {median(graph_s)} max "
          f"{most(graph_s)}, profiler median {median(profiler_s)} max {most(profiler_s)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
