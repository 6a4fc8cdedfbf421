"""Audit a problem suite: can the benchmark be passed without computing anything?

For every problem, on the chosen device:
  deterministic   two runs of the reference on the same inputs agree
  input-dependent two input draws give outputs that the harness would call different
  trivial         zeros, the output's mean, the input itself and noise with the output's mean and
                  standard deviation all fail the harness's own correctness check
  conditioned     the fp32 reference agrees with an fp64 reference on the same inputs
  fits            peak device memory of reference + candidate (two models, two input sets) < 20 GB
  timeable        the eager reference runs >= 20 us (else: launch-bound, reported, kept)

    python -m pytest_kernelbench.suite.audit [--problems DIR] [--level 1,2] [--device cuda]
                                       [--max-bytes N] [-k SUBSTRING]

On the CPU, problems whose inputs and outputs exceed --max-bytes are checked on the meta device
only (shapes and memory estimate), so the audit stays cheap enough for CI.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_kernelbench import faults, precision
from pytest_kernelbench.nested import leaves, map_leaves, nbytes
from pytest_kernelbench.settings import parse_levels
from pytest_kernelbench.suite import correctness, loading
from pytest_kernelbench.suite.discovery import Problem, find_problems
from pytest_kernelbench.suite.manifest import Entry, load_manifest

MEMORY_LIMIT_BYTES = 20e9
LAUNCH_BOUND_S = 20e-6
SEED = 42


@dataclass(frozen=True)
class Finding:
    problem: str
    check: str
    ok: bool
    detail: str


def trivial_answers(expected: Any, typical: Any, inputs: list) -> dict[str, Any]:
    """Outputs a candidate could return without computing the problem.

    Constants and noise take their statistics from `typical`, the output of another input
    draw: that is what a candidate could have precomputed. (The mean of the output being
    judged would be the answer itself for a scalar loss.)
    """
    import torch

    def stats(t) -> tuple[float, float]:
        wide = t.double()
        return wide.mean().item(), (wide.std().item() if t.numel() > 1 else 0.0)

    def const(t, ref):
        return torch.full_like(t, stats(ref)[0]) if t.is_floating_point() else t * 0

    def noise(t, ref):
        if not t.is_floating_point():
            return torch.zeros_like(t)
        generator = torch.Generator(device=t.device).manual_seed(SEED)
        drawn = torch.randn(t.shape, generator=generator, device=t.device, dtype=t.dtype)
        mean, std = stats(ref)
        return drawn * std + mean

    pairs = list(zip(leaves(expected), leaves(typical)))
    answers = {
        "zeros": map_leaves(expected, torch.zeros_like),
        "constant (another draw's mean)": _rebuild(expected, [const(a, b) for a, b in pairs]),
        "noise (another draw's mean and std)": _rebuild(expected,
                                                        [noise(a, b) for a, b in pairs]),
    }
    first = next((x for x in inputs if isinstance(x, torch.Tensor)), None)
    if isinstance(expected, torch.Tensor) and first is not None \
            and first.shape == expected.shape and first.dtype == expected.dtype:
        answers["input itself"] = first
    return answers


def _rebuild(structure: Any, replacements: list) -> Any:
    """structure with its tensor leaves replaced, in order."""
    queue = iter(replacements)
    return map_leaves(structure, lambda _: next(queue))



def determinism(first: Any, second: Any) -> tuple[bool, str]:
    """(ok, detail) for two outputs of the same model on the same inputs."""
    import torch

    if all(torch.equal(a, b) for a, b in zip(leaves(first), leaves(second))):
        return True, "two runs on the same inputs are bitwise equal"
    verdict = correctness.compare(first, second, 1e-6, 1e-6)
    return verdict.passed, "two runs differ only within 1e-6" if verdict.passed else verdict.message


def conditioning(double_model: Any, inputs: list[Any], first: Any, atol: float, rtol: float,
                 numerics: precision.Numerics) -> tuple[bool, str]:
    """(ok, detail): whether the reference's output at this precision agrees with float64's
    (at fp16/bf16 a mismatch is read against float64 anyway, so it always holds there)."""
    import torch

    double_inputs = [x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x
                     for x in inputs]
    with torch.no_grad():
        exact = double_model(*double_inputs)
    exact_cast = map_leaves(exact, lambda t: t.to(torch.float32) if t.is_floating_point() else t)
    first_cast = map_leaves(first, lambda t: t.to(torch.float32) if t.is_floating_point() else t)
    verdict = correctness.compare(exact_cast, first_cast, atol, rtol)
    if numerics.dtype is not None:
        return True, ("low precision: outputs are judged against float64, within 10x the "
                      "reference's own error (see precision.py)")
    return verdict.passed, ("fp32 agrees with fp64" if verdict.passed
                            else f"fp32 vs fp64: {verdict.message}")


def audit_problem(problem: Problem, device: str, atol: float, rtol: float, mode: str,
                  max_bytes: float, numerics: precision.Numerics) -> list[Finding]:
    import torch

    key = problem.key
    module = loading.import_file(problem.path, "kb_audit")
    found: list[Finding] = []

    def add(check: str, ok: bool, detail: str) -> None:
        found.append(Finding(key, check, ok, detail))

    io_bytes, param_bytes = meta_footprint(module)
    if device == "cpu" and io_bytes > max_bytes:
        estimate = 2 * (io_bytes + param_bytes)
        add("fits", estimate < MEMORY_LIMIT_BYTES,
            f"meta only: inputs+output {io_bytes / 1e9:.2f} GB, params {param_bytes / 1e9:.2f} GB, "
            f"two copies >= {estimate / 1e9:.2f} GB")
        return found

    init_args = loading.make_init_args(module, SEED, device)
    model = loading.build_model(module.Model, init_args, SEED, device, mode, numerics)
    if device.startswith("cuda"):
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
    inputs = loading.make_inputs(module, SEED + 1, device, numerics)
    with torch.no_grad():
        first = model(*loading.clone_inputs(inputs))
        second = model(*loading.clone_inputs(inputs))
    add("deterministic", *determinism(first, second))

    other_inputs = loading.make_inputs(module, SEED + 2, device, numerics)
    with torch.no_grad():
        other = model(*other_inputs)
    found += [Finding(key, *check) for check in wrong_answer_checks(first, other, inputs, atol, rtol)]

    if device.startswith("cuda"):
        # The second model and input set stand in for a candidate of the same footprint.
        twin = loading.build_model(module.Model, init_args, SEED, device, mode, numerics)
        with torch.no_grad():
            twin(*loading.clone_inputs(other_inputs))
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated() - base + 2 * param_bytes
        add("fits", peak < MEMORY_LIMIT_BYTES, f"peak {peak / 1e9:.2f} GB for reference + candidate")
        del twin

    double_model = loading.build_model(module.Model, init_args, SEED, device, mode,
                                       numerics).double()
    add("conditioned", *conditioning(double_model, inputs, first, atol, rtol, numerics))
    del double_model

    median_s = time_reference(model, inputs, device)
    add("timeable", True if not device.startswith("cuda") else median_s >= LAUNCH_BOUND_S,
        f"eager median {median_s * 1e6:.1f} us" + (
            " (launch-bound)" if device.startswith("cuda") and median_s < LAUNCH_BOUND_S else ""))
    return found


def meta_footprint(module) -> tuple[int, int]:
    """(bytes of the inputs and output, bytes of the parameters) of a problem, from its model
    built and called on the meta device: nothing is allocated."""
    import torch

    with torch.device("meta"):
        model = module.Model(*list(module.get_init_inputs()))
        inputs = list(module.get_inputs())
        with torch.no_grad():
            output = model(*inputs)
    return (nbytes(inputs) + nbytes(output),
            sum(p.numel() * p.element_size() for p in model.parameters()))


def wrong_answer_checks(first, other, inputs: list, atol: float,
                        rtol: float) -> list[tuple[str, bool, str]]:
    """(check, ok, detail) for answers that must fail against the reference's `first`: the
    output of another input draw (`other`), and each trivial answer."""
    verdict = correctness.compare(first, other, atol, rtol)
    checks = [("input-dependent", not verdict.passed,
               "another draw's output fails the check" if not verdict.passed
               else "the output of another input draw passes as correct: the output ignores "
               "the input")]
    for name, answer in trivial_answers(first, other, inputs).items():
        verdict = correctness.compare(first, answer, atol, rtol)
        checks.append((f"trivial: {name}", not verdict.passed, f"fails ({verdict.status})"
                       if not verdict.passed else "PASSES the correctness check"))
    return checks


def time_reference(model, inputs: list, device: str, calls: int = 20) -> float:
    import torch

    samples = []
    with torch.no_grad():
        for index in range(calls + 3):
            loading.synchronize(device)
            start = time.perf_counter()
            model(*inputs)
            loading.synchronize(device)
            if index >= 3:
                samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def render(findings: list[Finding], show_all: bool) -> str:
    from tabulate import tabulate

    rows = [[f.problem, f.check, "ok" if f.ok else "FINDING", f.detail]
            for f in findings if show_all or not f.ok]
    return tabulate(rows, headers=["problem", "check", "result", "detail"], tablefmt="github",
                    disable_numparse=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pytest_kernelbench.suite.audit",
                                     description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--problems", default="problems", type=Path)
    parser.add_argument("--level", type=parse_levels, default=(1, 2, 3))
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--mode", default="train", choices=["train", "eval"])
    parser.add_argument("--max-bytes", type=float, default=64e6,
                        help="on cpu, problems above this many input+output bytes get the "
                        "meta-only check (default: 64e6)")
    parser.add_argument("-k", dest="keyword", default="", help="only problems whose key contains this")
    parser.add_argument("--tags", default="", help="only problems with one of these manifest tags")
    parser.add_argument("--skip-tags", default="", help="leave out problems with one of these tags")
    parser.add_argument("--all", action="store_true", help="show passing checks too")
    parser.add_argument("--precision", choices=("fp32", "fp16", "bf16"), default="fp32",
                        help="cast inputs and parameters as --kb-precision does (default: fp32)")
    args = parser.parse_args(argv)
    if not args.problems.is_dir():
        parser.error(f"--problems: no such folder: {args.problems}")
    numerics = precision.Numerics.of(args.precision, "off")
    loading.apply(numerics)
    manifest = load_manifest(args.problems)
    tags = set(filter(None, args.tags.split(",")))
    skipped = set(filter(None, args.skip_tags.split(",")))

    def tagged(problem: Problem) -> set[str]:
        return set(manifest.get((problem.level, problem.problem_id), Entry()).tags)

    problems = [p for p in find_problems(args.problems, args.level) if args.keyword in p.key
                and (not tags or tags & tagged(p)) and not skipped & tagged(p)]
    findings: list[Finding] = []
    for problem in problems:
        entry = manifest.get((problem.level, problem.problem_id))
        atol = entry.atol if entry and entry.atol is not None else 1e-2
        rtol = entry.rtol if entry and entry.rtol is not None else 1e-2
        try:
            found = audit_problem(problem, args.device, atol, rtol, args.mode, args.max_bytes,
                                  numerics)
        except Exception as exc:  # noqa: BLE001 - one broken problem must not hide the others
            found = [Finding(problem.key, "runs", False, faults.describe_exception(exc))]
        findings.extend(found)
        bad = [f for f in found if not f.ok]
        print(f"{problem.key}: {len(found)} checks, {len(bad)} findings", file=sys.stderr,
              flush=True)
        if args.device.startswith("cuda"):
            import torch

            torch.cuda.empty_cache()
    print(render(findings, args.all))
    checked = len({f.problem for f in findings})
    bad_problems = len({f.problem for f in findings if not f.ok})
    print(f"\n{checked} problems audited on {args.device}, {len(findings)} checks, "
          f"{sum(not f.ok for f in findings)} findings in {bad_problems} problems")
    return 1 if bad_problems else 0


if __name__ == "__main__":
    sys.exit(main())
