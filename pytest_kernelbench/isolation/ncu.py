"""Nsight Compute metrics of each kernel one candidate call launches (`--kb-profile`).

For whoever writes the next attempt: a speedup says how fast, these say why — how long each
kernel ran, how close it came to the memory and SM throughput limits, and how full the SMs
were. Nothing here feeds a verdict.

Nsight Compute must start the process it profiles, so the call runs in a process of its own
under `ncu`, not in the sandbox worker: `python -m pytest_kernelbench.isolation.ncu REQUEST.json` loads
the candidate as the worker does (the same request; once CUDA is up, confined to the same files,
though free to talk to ncu: TCP, sockets and signals outside its domain), calls it once to warm
up, and calls it once more between cudaProfilerStart and Stop.
Each kernel of that call is replayed by ncu until it has every metric.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from pytest_kernelbench.gpu.kernels import base_name
from pytest_kernelbench.isolation import wire, worker
from pytest_kernelbench.suite import loading

# what the feedback calls each figure -> the Nsight Compute metric it is read from
METRICS = {
    "duration_s": "gpu__time_duration.sum",
    "memory_throughput_pct": "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "dram_throughput_pct": "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm_throughput_pct": "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "achieved_occupancy_pct": "sm__warps_active.avg.pct_of_peak_sustained_active",
    "registers_per_thread": "launch__registers_per_thread",
}
KERNEL_LIMIT = 64  # kernels read per call: a model of hundreds of layers needs no more to judge


def find_ncu() -> str | None:
    """The ncu executable: on PATH, else in the CUDA toolkit."""
    found = shutil.which("ncu")
    if found:
        return found
    for root in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if root and (Path(root) / "bin" / "ncu").is_file():
            return str(Path(root) / "bin" / "ncu")
    return None


def command(ncu: str, log_path: Path, request_path: Path) -> list[str]:
    """The ncu command line that profiles one call of the request's candidate."""
    return [ncu, "--profile-from-start", "off", "--target-processes", "all",
            "--launch-count", str(KERNEL_LIMIT), "--metrics", ",".join(METRICS.values()),
            "--csv", "--page", "raw", "--print-units", "base", "--log-file", str(log_path),
            sys.executable, "-m", "pytest_kernelbench.isolation.ncu", str(request_path)]


def parse(text: str, own: list[str]) -> list[dict]:
    """One entry per profiled kernel, in launch order, from ncu's raw CSV page (a header row,
    a row of units, one row per kernel); `own` names the candidate's own kernels."""
    rows = list(csv.reader(io.StringIO(_csv_part(text))))
    if len(rows) < 2:
        return []
    header, units = rows[0], rows[1]
    column = {name: index for index, name in enumerate(header)}
    if "Kernel Name" not in column:
        raise ValueError("no 'Kernel Name' column in Nsight Compute's output")
    own_names = {base_name(name) for name in own}
    kernels = []
    for row in rows[2:]:
        if len(row) != len(header):
            continue
        name = row[column["Kernel Name"]]
        entry: dict = {"kernel": name, "own": base_name(name) in own_names,
                       "grid": row[column["Grid Size"]] if "Grid Size" in column else None,
                       "block": row[column["Block Size"]] if "Block Size" in column else None}
        for key, metric in METRICS.items():
            index = column.get(metric)
            entry[key] = None if index is None else _number(row[index], units[index])
        kernels.append(entry)
    return kernels


def _csv_part(text: str) -> str:
    """ncu's log holds its own '==PROF==' lines before the table."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), len(lines))
    return "\n".join(lines[start:])


TIME_UNITS = {"ns": 1e-9, "nsecond": 1e-9, "us": 1e-6, "usecond": 1e-6, "ms": 1e-3,
              "msecond": 1e-3, "s": 1.0, "second": 1.0}


def _number(text: str, unit: str) -> float | None:
    """A figure of ncu's table ("2,692,832"), durations in seconds whatever their unit."""
    try:
        value = float(text.replace(",", ""))
    except ValueError:
        return None
    return value * TIME_UNITS.get(unit.strip(), 1.0)


def summary_lines(kernels: list[dict], limit: int = 8) -> list[str]:
    """A few lines for the feedback text: the candidate's own kernels first, longest first."""
    ranked = sorted(kernels, key=lambda k: (not k["own"], -(k["duration_s"] or 0.0)))
    lines = []
    for kernel in ranked[:limit]:
        figures = [_us(kernel["duration_s"]),
                   _pct("memory", kernel["memory_throughput_pct"]),
                   _pct("DRAM", kernel["dram_throughput_pct"]),
                   _pct("SM", kernel["sm_throughput_pct"]),
                   _pct("occupancy", kernel["achieved_occupancy_pct"])]
        if kernel["registers_per_thread"] is not None:
            figures.append(f"{kernel['registers_per_thread']:g} registers/thread")
        mark = "own" if kernel["own"] else "library"
        lines.append(f"{mark} {base_name(kernel['kernel'])[:60]}: "
                     + ", ".join(f for f in figures if f))
    if len(ranked) > limit:
        lines.append(f"... and {len(ranked) - limit} more kernels")
    return lines


def _us(seconds: float | None) -> str:
    return "" if seconds is None else f"{seconds * 1e6:.1f} us"


def _pct(label: str, value: float | None) -> str:
    return "" if value is None else f"{label} {value:.0f}%"


def profile(request: wire.Ncu, env: dict[str, str], own: list[str], timeout_s: float,
            folder: Path) -> tuple[list[dict] | None, str]:
    """(kernels, "") or (None, why not): the request's call profiled under ncu. `folder` is
    where the request and ncu's log are written (the confined process may read it)."""
    ncu = find_ncu()
    if ncu is None:
        return None, "ncu (Nsight Compute) not found on PATH or in CUDA_HOME/bin"
    request_path, log_path = folder / "ncu-request.json", folder / "ncu.csv"
    request_path.write_text(json.dumps(wire.encode_request(request)))
    try:
        # ncu's own temporary files beside the request, where the profiled process may reach
        done = subprocess.run(command(ncu, log_path, request_path), env={**env, "TMPDIR": str(folder)},
                              capture_output=True, text=True, timeout=timeout_s,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return None, f"ncu did not finish within {timeout_s:g} s"
    text = log_path.read_text(errors="replace") if log_path.is_file() else ""
    if done.returncode != 0:
        return None, f"ncu exited with {done.returncode}: " + _last_word(done, text)
    try:
        kernels = parse(text, own)
    except ValueError as exc:
        return None, str(exc)
    return (kernels, "") if kernels else (None, "ncu profiled no kernel in the call")


def _last_word(done: subprocess.CompletedProcess, log: str) -> str:
    """What to blame: the profiled process's last line of stderr, else ncu's own error."""
    lines = (done.stdout + "\n" + log + "\n" + done.stderr).splitlines()
    errors = [line for line in lines if line.startswith("==ERROR==")]
    said = [line for line in done.stderr.splitlines() if line.strip() and
            not line.startswith("==")]
    return (said or errors or ["no output"])[-1].strip()


def profile_one(request_path: Path) -> int:
    """The body that runs under ncu: one warm-up call, then one profiled call."""
    import torch

    request = wire.decode_request(json.loads(request_path.read_text()))
    if not isinstance(request, wire.Ncu):
        raise wire.BadRequest(f"{request_path} holds a {request.op} request, not an ncu one")
    device = request.loading.device
    torch.empty(1, device=device)  # CUDA (and ncu's injection) up before confinement
    worker.enter_policy(request.policy)
    try:
        loaded = worker.Worker().load(request.loading)
        inputs = loading.make_inputs(loaded.problem, request.input_seed, device,
                                     loaded.numerics)
        def call():
            return worker.forward(loaded.model, inputs, device)

        worker.guarded(call, "forward", request.loading.candidate)  # JIT, autotuning, lazy set-up
        on_cuda = device.startswith("cuda")  # (the CPU runs it only in this module's tests)
        if on_cuda:
            torch.cuda.profiler.start()
        worker.guarded(call, "forward", request.loading.candidate)
        if on_cuda:
            torch.cuda.profiler.stop()
    except worker.CandidateFault as fault:
        print(f"{fault.status}: {fault}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(profile_one(Path(sys.argv[1])))
