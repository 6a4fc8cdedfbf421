"""Feedback for whoever writes the next attempt (often an agent loop): one compact JSON and one
short text per candidate, from its record. Pure functions; the plugin writes the files.

    --kb-feedback=DIR  ->  DIR/<set>/level<L>_<id>_<sample>.json and .txt
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_kernelbench.isolation import ncu
from pytest_kernelbench.judge.fast import is_fast
from pytest_kernelbench.record import Record

STAGES = ("compile", "correct", "speed")
DETAIL_LINES = 12  # of the traceback or compiler output, the candidate's own frames first


def stage_reached(record: Record) -> str:
    """The last stage the candidate got through: none, compile, correct or speed."""
    if not record.get("compiled"):
        return "none"
    if not record.get("correct"):
        return "compile"
    # p=0 passes a correct candidate whose time the harness's clock could not settle
    timed = record.get("speedup") is not None or record.get("status") == "passed"
    return "speed" if timed else "correct"


def feedback(record: Record, p: float) -> dict[str, Any]:
    """What a next attempt needs: where it failed and why, or how fast it is and how far from
    the hardware's limit."""
    light = record.get("speed_of_light") or {}
    details = (record.get("error_details") or "").strip().splitlines()
    return {
        "problem": f"level{record['level']}/{record['problem_id']}_{record['problem']}",
        "candidate_set": record["candidate_set"],
        "sample": record["sample"],
        "candidate_path": record.get("candidate_path"),
        "status": record.get("status"),
        "stage_reached": stage_reached(record),
        "error": record.get("error"),
        "details": details[-DETAIL_LINES:],
        "compiler_errors": record.get("extension_error"),
        "extension": record.get("extension"),
        "speedup": record.get("speedup"),
        "p": p,
        "fast": is_fast(record, p),  # counts in fast_p at p, as the judge decided
        "candidate_time_s": record.get("candidate_time"),
        "baseline_time_s": record.get("baseline_time"),
        "speed_of_light_fraction": light.get("candidate_fraction"),
        "baseline_speed_of_light_fraction": light.get("baseline_fraction"),
        "flags": record.get("flags") or [],
        "kernels": record.get("ncu_kernels"),  # --kb-profile: Nsight Compute's, per kernel
        "profile_error": record.get("ncu_error"),
    }


def render(info: dict[str, Any]) -> str:
    """The same as a few lines of text."""
    head = f"{info['problem']} [{info['candidate_set']} {info['sample']}]: {info['status']}"
    lines = [head]
    if info["status"] == "passed" and info["speedup"] is None:
        lines.append(f"correct; no speedup: the harness's clock could neither confirm nor refute "
                     f"the reported time (a busy host), and at p = {info['p']:g} any time "
                     "counts; time it again on a quieter host for a speedup")
    elif info["status"] in ("passed", "slower"):
        lines.append(f"correct; speedup {info['speedup']:.3f}x over eager (p = {info['p']:g}); "
                     f"candidate {_us(info['candidate_time_s'])}, eager "
                     f"{_us(info['baseline_time_s'])}")
        if info["speed_of_light_fraction"] is not None:
            eager = info["baseline_speed_of_light_fraction"]
            lines.append(f"{info['speed_of_light_fraction']:.1%} of this device's speed of light"
                         + (f" (eager: {eager:.1%})" if eager is not None else ""))
    elif info["status"] == "inconclusive" and info.get("speedup") is not None:
        lines.append(f"correct; speedup {info['speedup']:.3f}x over eager, too close to p = "
                     f"{info['p']:g} for this timing to tell; time it longer (more timed "
                     f"calls) or on a quieter host to decide")
    elif info["status"] == "inconclusive":
        lines.append("correct; no speedup: the harness's own clock could neither confirm nor "
                     "refute the reported time (a busy host); time it again on a quieter one")
    else:
        passed = STAGES[:STAGES.index(info["stage_reached"]) + 1] \
            if info["stage_reached"] != "none" else ()
        failed = STAGES[len(passed)] if len(passed) < len(STAGES) else "speed"
        lines.append(f"failed at {failed}: {info['error']}")
        if info["compiler_errors"]:
            lines.append(f"compiler: {info['compiler_errors']}")
        lines += [f"  {line}" for line in info["details"]]
    if info.get("kernels"):
        lines.append("Nsight Compute, one call:")
        lines += [f"  {line}" for line in ncu.summary_lines(info["kernels"])]
    elif info.get("profile_error"):
        lines.append(f"no Nsight Compute figures: {info['profile_error']}")
    lines += [f"note: {flag}" for flag in info["flags"]]
    return "\n".join(lines) + "\n"


def _us(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1e6:.1f} us"


def file_stem(record: Record) -> Path:
    return Path(record["candidate_set"]) / \
        f"level{record['level']}_{record['problem_id']}_{record['sample']}"
