"""A folder of real candidates judged end to end, cold (empty build cache) then warm.

  python benchmarks/real_run.py OUTDIR --problems DIR --candidates DIR [--limit SECONDS]
        [--warm-limit SECONDS] [--build-cache DIR] [--only cold|warm] [PYTEST ARGS...]

Each run is one `pytest` process (CUDA unless the arguments say `--kb-device=cpu`; the given
arguments, e.g. `-n 4` or `-m kb_compile` for the builds alone), stopped with SIGINT
at its limit (its report is kept). The warm run orders its cases by the cold run's report
(`--kb-costs`), as a rerun that writes the same `--kb-report` does. For each it prints: wall
time; the builds (how many of each status, their summed and longest seconds, their phases,
how long they ran, the cores' use meanwhile, the precompiled torch headers); seconds per
candidate for each harness stage, each part of the workers' loads and each part of the
timings; the GPU's idle fraction, the share of the run's wall time in which no item held the
device (from the records' `held` intervals: stages hold the device while they run candidate
code on it); and how the device was shared (holds.device_schedule): seconds held
alone by timings, seconds of shared holds and how many held at once, and how many timings each
drain of the shared work let in. Records whose speedup the harness's checks changed or let
stand after a disagreement (a baseline slowed in the candidate's process, the harness's clock)
get a line each: where a false verdict would hide.
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

from pytest_kernelbench.reporting.holds import device_schedule, hold_spans


def covered(intervals: list[tuple[float, float]]) -> float:
    """Seconds covered by the union of intervals."""
    total, end = 0.0, float("-inf")
    for start, stop in sorted(intervals):
        if stop <= end:
            continue
        total += stop - max(start, end)
        end = stop
    return total


class CoreSampler:
    """The host's busy and total CPU time (/proc/stat's first line), sampled twice a second."""

    def __init__(self) -> None:
        self.samples: list[tuple[float, int, int]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> CoreSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                fields = [int(x) for x in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
            except (OSError, ValueError):
                return
            idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
            self.samples.append((time.time(), sum(fields) - idle, sum(fields)))
            self._stop.wait(0.5)

    def busy(self, start: float, end: float) -> float | None:
        """The fraction of the cores busy between two times, or None without two samples."""
        inside = [s for s in self.samples if start <= s[0] <= end]
        if len(inside) < 2 or inside[-1][2] == inside[0][2]:
            return None
        return (inside[-1][1] - inside[0][1]) / (inside[-1][2] - inside[0][2])


def build_lines(builds: list[dict], cores: CoreSampler | None) -> list[str]:
    """Where the builds' seconds went, and the cores' use while builds were queued."""
    ran = [b for b in builds if b.get("phases")]
    lines = []
    if ran:
        lines.append("build phases (median / p90 / total): " + spread(ran, "phases"))
    starts = sorted(b["span"][0] for b in builds if b.get("span"))
    if starts:
        end = max(b["span"][1] for b in builds if b.get("span"))
        lines.append(f"builds ran {end - starts[0]:.0f} s, from the first one's start to the "
                     "last one's end")
    if cores is not None and len(starts) > 1:
        busy = cores.busy(starts[0], starts[-1])
        if busy is not None:
            lines.append(f"cores busy while builds were queued ({starts[-1] - starts[0]:.0f} s, "
                         f"from the first build's start to the last's): {busy:.0%}")
    return lines


def spread(records: list[dict], field: str) -> str:
    """'name median/p90/total, ...' over the records, for each key of a field of seconds."""
    seconds: dict[str, list[float]] = {}
    for r in records:
        for name, value in (r.get(field) or {}).items():
            seconds.setdefault(name, []).append(value)
    return ", ".join(f"{name} {statistics.median(v):.2f}/{sorted(v)[int(0.9 * (len(v) - 1))]:.2f}"
                     f"/{sum(v):.0f}" for name, v in sorted(seconds.items()))


def summarize(name: str, report: Path, started: float, wall_s: float,
              cores: CoreSampler | None = None) -> None:
    if not report.exists():
        print(f"{name}: no report")
        return
    data = json.loads(report.read_text())
    records = [r for r in data["results"] if r.get("status") not in (None, "missing")]
    statuses = Counter(r["status"] for r in records)
    print(f"{name}: wall {wall_s:.0f} s, {len(records)} records, {dict(statuses)}")
    builds = data.get("builds") or []
    if builds:
        seconds = [b.get("seconds") or 0 for b in builds]
        print(f"  builds: {dict(Counter(b['status'] for b in builds))}, summed "
              f"{sum(seconds):.0f} s, longest {max(seconds):.0f} s")
        for line in build_lines(builds, cores):
            print("  " + line)
    log = report.with_suffix(".log")
    for line in (log.read_text(errors="replace").splitlines() if log.exists() else []):
        if "kernelbench: torch/extension.h" in line:  # the precompiled header's line
            print("  " + line.partition("kernelbench: ")[2])
    if records:
        print("  seconds per candidate (median / p90 / total): " + spread(records, "harness_s"))
    if any(r.get("load_phases") for r in records):
        print("  load, in the worker (median / p90 / total): " + spread(records, "load_phases"))
    if any(r.get("timing_phases") for r in records):
        print("  timings, by part (median / p90 / total): " + spread(records, "timing_phases"))
    for line in attribution(records):
        print("  " + line)
    for line in corrected(records):
        print("  " + line)
    held = [(start, end) for r in records for _, start, end in hold_spans(r)]
    if held:
        first, last = min(s for s, _ in held), max(e for _, e in held)
        busy = covered(held)
        print(f"  GPU held {busy:.0f} s of {wall_s:.0f} s wall: idle fraction "
              f"{1 - busy / wall_s:.2f} (first item at +{first - started:.0f} s, last ended at "
              f"+{last - started:.0f} s; idle {1 - busy / (last - first):.2f} between them)")
    for device, schedule in device_schedule(records).items():
        print("  " + sharing(device, schedule))


def attribution(records: list[dict]) -> list[str]:
    """How the kernels of each timed candidate were read, and the seconds it took (harness_s's
    `profile`, the pytest process's wait for the answer), by method; the timed candidates that
    got no answer."""
    timed = [r for r in records if "custom_kernels" in r and r.get("speedup") is not None]
    by_method: dict[str, list[float]] = {}
    for r in timed:
        method = r.get("kernel_attribution") or "none"
        by_method.setdefault(method, []).append((r.get("harness_s") or {}).get("profile", 0.0))
    lines = []
    for method, seconds in sorted(by_method.items()):
        seconds.sort()
        lines.append(f"attribution {method}: {len(seconds)} of {len(timed)} timed, "
                     f"{seconds[0]:.2f}-{seconds[-1]:.2f} s (median "
                     f"{seconds[len(seconds) // 2]:.2f})")
    return lines


# The flags of a speedup that the harness's checks changed or let stand after a disagreement
# (evaluation.py: _unslow_baseline, _check_clock, _bound_by_harness_clock): the records a false
# verdict would hide in, worth reading in every run.
CORRECTED = ("baseline took", "the speedup uses the harness's clock", "bounded by the harness's clock")


def corrected(records: list[dict]) -> list[str]:
    """One line per record whose speedup a check changed or weighed: where, verdict, flag."""
    lines = []
    for r in records:
        for flag in r.get("flags") or []:
            if any(mark in flag for mark in CORRECTED):
                speedup = f"{r['speedup']:.3f}" if r.get("speedup") is not None else "-"
                lines.append(f"checked speedup: L{r['level']}/{r['problem_id']} {r['status']} "
                             f"{speedup}: {flag}")
    return lines


def sharing(device: str, schedule: dict) -> str:
    """One line on how a device was shared: timings alone, shared holds by how many held at
    once, and how many timings each drain of the shared work let in."""
    by_holders = schedule["shared_s_by_holders"]
    shared_s = sum(by_holders.values())
    holder_s = sum(n * s for n, s in by_holders.items())
    few_s = sum(s for n, s in by_holders.items() if n <= 2)
    return (f"device {device[:13]}: alone {schedule['exclusive_s']:.0f} s, shared "
            f"{shared_s:.0f} s ({holder_s:.0f} holder-seconds, {holder_s / max(shared_s, 1e-9):.2f} "
            f"holders on average, {few_s:.0f} s with one or two), idle {schedule['idle_s']:.0f} s; "
            f"{schedule['timings']} timings in {schedule['batches']} drains "
            f"({schedule['timings'] / max(schedule['batches'], 1):.2f} a drain)")


def run(name: str, out: Path, args: argparse.Namespace, extra: list[str], limit: float) -> None:
    report = out / f"{name}.json"
    if name == "cold":  # every build from nothing
        shutil.rmtree(args.build_cache, ignore_errors=True)
    cold = out / "cold.json"
    if name == "warm" and cold.exists() and not any(a.startswith("--kb-costs") for a in extra):
        # the order a rerun with the same --kb-report would take from the run before
        extra = [f"--kb-costs={cold}", *extra]
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
               "--kb-device=cuda", f"--kb-problems={args.problems}",
               f"--kb-candidates={args.candidates}", f"--kb-build-cache={args.build_cache}",
               f"--kb-report={report}", *extra]
    started = time.time()
    with open(out / f"{name}.log", "w") as log, CoreSampler() as cores:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        try:
            process.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGINT)  # pytest writes its report on the way out
            process.wait()
    summarize(name, report, started, time.time() - started, cores)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--problems", required=True)
    parser.add_argument("--candidates", required=True)
    parser.add_argument("--limit", type=float, default=600)
    parser.add_argument("--warm-limit", type=float, default=0, help="0: no warm run")
    parser.add_argument("--build-cache", type=Path, help="default: OUT/build-cache, empty at "
                        "first; a folder of an earlier run's builds makes the first run warm")
    parser.add_argument("--only", choices=("cold", "warm"), help="run one of the two only")
    args, extra = parser.parse_known_args()
    args.build_cache = args.build_cache or args.out / "build-cache"
    args.out.mkdir(parents=True, exist_ok=True)
    if args.only != "warm":
        run("cold", args.out, args, extra, args.limit)
    if args.only == "warm" or args.warm_limit > 0:
        run("warm", args.out, args, extra, args.warm_limit or args.limit)
    return 0


if __name__ == "__main__":
    sys.exit(main())
