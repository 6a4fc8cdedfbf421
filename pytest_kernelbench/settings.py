"""The validated settings of a run, and the table of options that sets them: each option's
flag, help, parser, check and default, declared once. Pure Python: the pytest face
(plugin/options.py) builds its options and ini twins from this table; the API builds Settings
directly, whose constructor runs the same checks."""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from pytest_kernelbench import confine, precision
from pytest_kernelbench.precision import Numerics

DEVICE_PATTERN = re.compile(r"^(auto|cpu|cuda(:\d+)?)$")
MODES = ("train", "eval")
TIMINGS = ("events", "graph", "auto")
DRAINS = ("wait", "stop")
BUILD_CORES = ("pause", "split")
UPSTREAM_RULES = ("v0", "main")
COMPILE_MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


class SettingsError(ValueError):
    """A value a run cannot take; its one-line message names the option, as the command line
    names it (--kb-p: p must be >= 0 ...)."""


# Each option has a check of the value its Settings field holds, which the Settings
# constructor runs, and a parser of the text given on the command line or in an ini file,
# which reads the text and then runs the same check: both faces refuse a bad value alike.


def check_levels(levels: Any) -> tuple[int, ...]:
    if not isinstance(levels, tuple) or not levels:
        raise argparse.ArgumentTypeError(
            f"levels must be a tuple such as (1, 2), got {levels!r}")
    for level in levels:
        if isinstance(level, bool) or level not in (1, 2, 3):
            raise argparse.ArgumentTypeError(
                f"unknown level {str(level)!r}: use 1, 2 or 3, or a comma list such as 1,2")
    return levels


def parse_levels(text: str) -> tuple[int, ...]:
    """'1' or '1,3' -> (1,) or (1, 3); levels are 1, 2 or 3."""
    levels = set()
    for part in text.split(","):
        part = part.strip()
        levels.add(int(part) if part in {"1", "2", "3"} else part)
    return check_levels(tuple(sorted(levels, key=str)))


def _number_text(value: float) -> str:
    """A number as a person would type it: -1, 0.5, 1e-05, nan."""
    text = f"{value:g}"
    return text if float(text) == value else repr(value)


@dataclass(frozen=True)
class NumberRule:
    """What a numeric option takes: a number (a whole one where cast is int) that accept takes.
    The messages may use {value}: what was given, quoted where it is not a number."""

    cast: Callable[[str], float]
    unreadable: str
    accept: Callable[[float], bool]
    rejected: str

    def check(self, value: Any) -> Any:
        kinds = (int,) if self.cast is int else (int, float)
        if isinstance(value, bool) or not isinstance(value, kinds):
            raise argparse.ArgumentTypeError(self.unreadable.format(value=repr(value)))
        if not self.accept(value):  # also false for NaN
            raise argparse.ArgumentTypeError(self.rejected.format(value=_number_text(value)))
        return value

    def parse(self, text: str) -> Any:
        try:
            value = self.cast(text)
        except ValueError:
            raise argparse.ArgumentTypeError(self.unreadable.format(value=repr(text))) from None
        return self.check(value)


P = NumberRule(float, "p must be a number, got {value}", lambda v: v >= 0,
               "p must be >= 0 (a speedup threshold), got {value}")
TOLERANCE = NumberRule(float, "tolerance must be a number, got {value}", lambda v: v >= 0,
                       "tolerance must be >= 0, got {value}")
POSITIVE_INT = NumberRule(int, "expected a whole number, got {value}", lambda v: v >= 1,
                          "expected a number >= 1, got {value}")
SECONDS = NumberRule(float, "expected seconds, got {value}", lambda v: v > 0,
                     "expected seconds > 0, got {value}")
HOURS = NumberRule(float, "expected hours, got {value}", lambda v: v > 0,
                   "expected hours > 0, got {value}")
FRACTION = NumberRule(float, "expected a number, got {value}", lambda v: 0 <= v < 1,
                      "expected a fraction in [0, 1), got {value}")
JOBS = NumberRule(int, "expected a whole number, got {value}", lambda v: v >= 0,
                  "expected a number >= 0, got {value}")
SEED = NumberRule(int, "seed must be a whole number, got {value}", lambda v: True, "")
CASES = NumberRule(int, "expected a number >= 0 or all, got {value}", lambda v: v >= 0,
                   "expected a number >= 0 or all, got {value}")

parse_p = P.parse
parse_tolerance = TOLERANCE.parse
parse_positive_int = POSITIVE_INT.parse
parse_seconds = SECONDS.parse
parse_hours = HOURS.parse
parse_fraction = FRACTION.parse
parse_jobs = JOBS.parse


def summary_ps(p: float) -> tuple[float, ...]:
    """The thresholds the summary shows: fast_0, fast_1 and the run's own p."""
    return tuple(sorted({0.0, 1.0, p}))


def check_max_age_s(seconds: Any) -> Any:
    """A baseline's greatest age, held in seconds, checked in the hours the option takes."""
    is_number = isinstance(seconds, (int, float)) and not isinstance(seconds, bool)
    HOURS.check(seconds / 3600 if is_number else seconds)
    return seconds


def parse_device(text: str) -> str:
    if not isinstance(text, str) or not DEVICE_PATTERN.match(text):
        raise argparse.ArgumentTypeError(
            f"unknown device {text!r}: use auto, cpu, cuda or cuda:N"
        )
    return text


def _one_of(text: str, allowed: tuple[str, ...], what: str, words: str) -> str:
    if text not in allowed:
        raise argparse.ArgumentTypeError(f"{what} must be {words}, got {text!r}")
    return text


def parse_mode(text: str) -> str:
    return _one_of(text, MODES, "mode", "eval or train")


def parse_timing(text: str) -> str:
    return _one_of(text, TIMINGS, "timing", "events, graph or auto")


def parse_drain(text: str) -> str:
    return _one_of(text, DRAINS, "drain", "wait or stop")


def parse_build_cores(text: str) -> str:
    return _one_of(text, BUILD_CORES, "build cores", "pause or split")


def parse_upstream_rules(text: str) -> str:
    return _one_of(text, UPSTREAM_RULES, "upstream rules", "v0 or main")


def parse_baseline(text: str) -> str:
    """'eager', 'compile' or 'compile:MODE' with a torch.compile mode."""
    kind, _, mode = text.partition(":") if isinstance(text, str) else ("", "", "")
    if kind == "eager" and not mode or kind == "compile" and (not mode or mode in COMPILE_MODES):
        return text
    raise argparse.ArgumentTypeError(
        f"unknown baseline {text!r}: use eager, compile or compile:MODE with MODE one of "
        + ", ".join(COMPILE_MODES))


def parse_confine(text: str) -> str:
    if text not in confine.MODES:
        raise argparse.ArgumentTypeError(f"confinement must be auto, require or off, got {text!r}")
    return text


def parse_precision(text: str) -> str:
    if text not in precision.PRECISIONS:
        raise argparse.ArgumentTypeError(f"precision must be fp32, fp16 or bf16, got {text!r}")
    return text


def parse_tolerance_profile(text: str) -> str:
    try:
        if not isinstance(text, str):
            raise ValueError(f"tolerance must be v0, main or ATOL,RTOL (two numbers >= 0), "
                             f"got {text!r}")
        return precision.parse_tolerance_profile(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def parse_tf32(text: str) -> str:
    if text not in precision.TF32_POLICIES:
        raise argparse.ArgumentTypeError(f"tf32 must be off or allow, got {text!r}")
    return text


def parse_on_off(text: str) -> bool:
    if text not in ("on", "off"):
        raise argparse.ArgumentTypeError(f"must be on or off, got {text!r}")
    return text == "on"


def check_cases(value: Any) -> int | None:
    """How many of the fastest and of the slowest timed cases the summary lists: a number >= 0,
    or None for every case."""
    return None if value is None else int(CASES.check(value))


def parse_cases(text: str) -> int | str:
    """'5' -> 5, 'all' -> 'all' (the field's None, every case: the option's to_field; a None
    here would read as an option not given)."""
    if isinstance(text, str) and text.strip().lower() == "all":
        return "all"
    return int(CASES.parse(text))


def check_switch(value: Any) -> bool:
    if not isinstance(value, bool):
        raise argparse.ArgumentTypeError(f"expected True or False, got {value!r}")
    return value


def check_path(value: Any) -> Path:
    if not isinstance(value, Path):
        raise argparse.ArgumentTypeError(f"expected a pathlib.Path, got {value!r}")
    return value


def check_shard(shard: Any) -> tuple[int, int]:
    if not (isinstance(shard, tuple) and len(shard) == 2
            and all(isinstance(n, int) and not isinstance(n, bool) for n in shard)):
        raise argparse.ArgumentTypeError(f"shard: expected I/N such as 1/4, got {shard!r}")
    i, n = shard
    if n < 1 or not 1 <= i <= n:
        raise argparse.ArgumentTypeError(f"shard: expected 1 <= I <= N, got '{i}/{n}'")
    return i, n


def parse_shard(text: str) -> tuple[int, int]:
    """'2/4' -> (2, 4): the second of four shards."""
    index, slash, count = text.partition("/")
    if not slash or not index.strip().isdigit() or not count.strip().isdigit():
        raise argparse.ArgumentTypeError(f"shard: expected I/N such as 1/4, got {text!r}")
    return check_shard((int(index), int(count)))


def parse_tags(text: str) -> tuple[str, ...]:
    return tuple(tag.strip() for tag in text.split(",") if tag.strip())


def check_tags(tags: Any) -> tuple[str, ...]:
    if not isinstance(tags, tuple) or not all(isinstance(tag, str) for tag in tags):
        raise argparse.ArgumentTypeError(f"tags must be a tuple of names, got {tags!r}")
    return tags


def check_paths(paths: Any) -> tuple[Path, ...]:
    if not isinstance(paths, tuple) or not all(isinstance(path, Path) for path in paths):
        raise argparse.ArgumentTypeError(f"expected a tuple of pathlib.Path, got {paths!r}")
    return paths


def default_build_cache() -> Path:
    """Where extension builds go unless --kb-build-cache says: the user's cache folder."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "pytest-kernelbench" / "extensions"


@dataclass(frozen=True)
class Option:
    """One command-line option and its ini twin (`kb_<name>` in pytest.ini, pyproject.toml...).

    Its default is the Settings field's, written once there; help shows it through `shown`.
    Paths given on the command line are relative to where pytest was started, ini paths to the
    ini file.
    """

    flag: str  # --kb-...
    field: str  # the Settings field it sets
    help: str  # "{default}" is replaced by the default as shown
    metavar: str | None = None  # None: a switch (store_true; ini: true/false)
    parse: Callable[[str], Any] | None = None
    # The check of the field's value that Settings runs (parse ends with the same check);
    # the options that name a folder or file take a Path.
    check: Callable[[Any], Any] = check_path
    kind: str = "value"  # value, switch, dir (must exist), file (must exist), path, dirs
    ini: bool = True  # whether a file may set it
    shown: Callable[[Any], str] = lambda value: "off" if value is None or value is False \
        else f"{value:g}" if isinstance(value, float) else str(value)
    to_field: Callable[[Any], Any] = lambda value: value

    @property
    def dest(self) -> str:
        return "kb_" + self.flag.removeprefix("--kb-").replace("-", "_")

    @property
    def default(self) -> Any:
        return FIELD_DEFAULTS[self.field]


def on_off_option(flag: str, field: str, help: str) -> Option:
    """An option that takes on or off (ini: the same words) for a boolean field."""
    return Option(flag, field, help, "on|off", parse_on_off, shown=lambda on: "on" if on else "off",
                  check=check_switch)


def _levels_shown(levels: tuple[int, ...]) -> str:
    return "all" if levels == (1, 2, 3) else ",".join(map(str, levels))


OPTIONS: tuple[Option, ...] = (
    Option("--kb-candidates", "candidate_dirs", "folder of candidate kernels (ModelNew), or "
           "builtin:reference (each problem's own Model) or builtin:torch_compile (it under "
           "torch.compile), made from the problems; repeat to compare several sets. Evaluation "
           "is off unless at least one is given.",
           "DIR", kind="dirs", shown=lambda _: "none (the plugin stays idle)",
           check=check_paths),
    Option("--kb-problems", "problems_dir", "problem folder with level<N>/<id>_<Name>.py files "
           "(default: {default}).", "DIR", kind="dir",
           shown=lambda _: "./problems, else the suite that ships with the plugin"),
    Option("--kb-level", "levels", "levels to evaluate, e.g. 1 or 1,2 (default: {default}).",
           "N[,N]", parse_levels, shown=_levels_shown,
           check=check_levels),
    Option("--kb-tags", "tags", "only problems carrying one of these manifest tags, e.g. "
           "conv,norm (default: {default}).", "TAG[,TAG]", parse_tags,
           shown=lambda tags: ",".join(tags) or "all",
           check=check_tags),
    Option("--kb-p", "p", "speedup threshold: a speed item passes where the timing shows the "
           "speedup above P (its 95%% interval, or without one by 20%%); the summary reports "
           "fast_P (default: {default}).", "P", parse_p,
           check=P.check),
    Option("--kb-trials", "trials", "correctness trials, each on freshly drawn inputs "
           "(default: {default}).", "N", parse_positive_int,
           check=POSITIVE_INT.check),
    Option("--kb-precision", "precision", "fp32, fp16 or bf16: inputs and both models' "
           "parameters cast to it; the expected output is the reference's at that precision, "
           "and a mismatch is read against a float64 reference (default: {default}).", "P",
           parse_precision,
           check=parse_precision),
    Option("--kb-tolerance", "tolerance", "tolerance profile: v0 (1e-2 at every precision, as in "
           "the paper), main (1e-4 for fp32, 1e-2 for fp16 and bf16, as upstream's main branch) "
           "or ATOL,RTOL; manifest tolerances scale with it (default: {default}).", "PROFILE",
           parse_tolerance_profile,
           check=parse_tolerance_profile),
    Option("--kb-atol", "atol", "absolute tolerance (default: {default}).", "X", parse_tolerance,
           shown=lambda _: "from --kb-tolerance",
           check=TOLERANCE.check),
    Option("--kb-rtol", "rtol", "relative tolerance (default: {default}).", "X", parse_tolerance,
           shown=lambda _: "from --kb-tolerance",
           check=TOLERANCE.check),
    Option("--kb-tf32", "tf32", "off: TF32 switched off in cuBLAS and cuDNN for the reference, "
           "the baseline and (as the process starts) the candidate; allow: on for both sides. "
           "A candidate that switches it on itself under off is recorded (default: {default}).",
           "MODE", parse_tf32,
           check=parse_tf32),
    Option("--kb-device", "device", "auto, cpu, cuda or cuda:N; auto = cuda when available, "
           "else cpu (default: {default}).", "DEV", parse_device,
           check=parse_device),
    Option("--kb-mode", "mode", "run models in train or eval mode; train as upstream "
           "KernelBench: batch norm uses batch statistics, shipped problems keep dropout at p=0 "
           "(default: {default}).", "MODE", parse_mode,
           check=parse_mode),
    Option("--kb-timeout", "timeout_s", "limit for each stage of each candidate (compile, correct "
           "with all its trials, speed with all its timing); past it the stage fails with status "
           "timeout (default: {default}).", "SECONDS", parse_seconds,
           check=SECONDS.check),
    Option("--kb-build-timeout", "build_timeout_s", "limit for each extension build run ahead of "
           "the items (default: {default}).", "SECONDS", parse_seconds,
           check=SECONDS.check),
    Option("--kb-seed", "seed", "base seed for weights and inputs (default: {default}).", "N",
           SEED.parse, check=SEED.check),
    Option("--kb-flag-speedup", "flag_speedup", "flag speedups above X in the report for a look "
           "by hand (default: {default}).", "X", parse_p,
           check=P.check),
    Option("--kb-require-kernel", "require_kernel", "fail the speed item of a candidate that ran "
           "no GPU kernel of its own (status torch_only; detected on CUDA); default: a flag only.",
           kind="switch",
           check=check_switch),
    Option("--kb-timing", "timing", "events: CUDA events around each eager call (as upstream "
           "KernelBench); graph: replay each side from a CUDA graph (no launch overhead; falls "
           "back to events with a note when a side cannot be captured); auto: graph for "
           "launch-bound problems, whose eager baseline takes under 50 us per call "
           "(default: {default}).", "HOW", parse_timing,
           check=parse_timing),
    Option("--kb-drain", "drain", "how a timing gets its device from the work sharing it: "
           "stop: each worker's candidate process is stopped where it is and the GPU waited "
           "on until idle, every timing at once; wait: once each worker's request in progress "
           "ends (timings gather first, so that the device drains once for several) "
           "(default: {default}).", "HOW", parse_drain,
           check=parse_drain),
    Option("--kb-build-cores", "build_cores", "how builds share the host's cores with "
           "timings: pause: builds run on every core and stop while any timing runs; split: "
           "two cores per GPU are kept for its timings and the builds run on the others "
           "without stopping (CUDA only) (default: {default}).", "HOW", parse_build_cores,
           check=parse_build_cores),
    Option("--kb-rse", "target_rse", "stop timing once the median of each side is known to this "
           "relative standard error, e.g. 0.005 = 0.5%%, or to twice it once the speedup's "
           "interval is clear of 0, 1, p and --kb-flag-speedup; --benchmark-max-time still caps "
           "the time; 0 always spends the budget (default: {default}).", "X", parse_fraction,
           check=FRACTION.check),
    Option("--kb-baseline", "baseline", "what candidates are timed against: eager, compile or "
           "compile:MODE (torch.compile; MODE e.g. max-autotune). Correctness is always judged "
           "against eager (default: {default}).", "B", parse_baseline,
           check=parse_baseline),
    Option("--kb-baseline-cache", "baseline_cache", "reuse baseline timings kept in DIR, keyed by "
           "GPU, driver, torch, problem source, baseline and timing mode; missing or stale ones "
           "are timed in the pytest process and stored. The candidate is then timed alone, not "
           "in turns with the baseline (default: {default}).", "DIR", kind="path"),
    Option("--kb-baseline-max-age", "baseline_max_age_s", "cached baseline timings older than "
           "this are stale (default: {default}).", "HOURS", parse_hours,
           shown=lambda seconds: f"{seconds / 3600:g}", to_field=lambda hours: hours * 3600,
           check=check_max_age_s),
    Option("--kb-retime-baseline", "retime_baseline", "time every baseline afresh and overwrite "
           "the cache entries.", kind="switch",
           check=check_switch),
    Option("--kb-build-jobs", "build_jobs", "build candidates' C++/CUDA extensions N at a time "
           "(per xdist worker) while the items run; 0 builds each when its compile item runs "
           "(default: {default}).",
           "N", parse_jobs, shown=lambda _: "CPU cores / xdist workers",
           check=JOBS.check),
    Option("--kb-build-cache", "build_cache", "content-addressed folder of built extensions, "
           "shareable between runs and machines (default: {default}).", "DIR", kind="path",
           shown=lambda _: "~/.cache/pytest-kernelbench/extensions"),
    on_off_option("--kb-build-headers", "build_headers", "on: where at least three builds would "
                  "compile torch/extension.h with the same command, compile it once into a "
                  "precompiled header under the build cache (about 0.8 GB each) that their C++ "
                  "compiles load instead, to the same objects; off: each build parses the header "
                  "itself (default: {default})."),
    Option("--kb-allow-input-changes", "allow_input_changes", "let forward change its input "
           "tensors, as upstream KernelBench does. Default: a candidate that changes an input "
           "its reference leaves alone fails (mutated_input): in a real model that input may "
           "be used again.", kind="switch",
           check=check_switch),
    on_off_option("--kb-order-trials", "order_trials", "on: on CUDA, after the correctness "
                  "trials pass, two stream-order trials (one delays the caller's stream before it "
                  "writes the inputs, one delays the candidate's own streams): a candidate whose "
                  "output depends on GPU work not ordered with the caller's stream fails with "
                  "status race, on every run alike; off: no such trials, and a missing order "
                  "shows only as it happens to (default: {default})."),
    Option("--kb-upstream-rules", "upstream_rules", "the upstream KernelBench rules each record's "
           "`upstream` verdict and the second summary table follow: v0 (atol = rtol = 1e-2, as "
           "in the paper) or main (1e-4 for fp32) (default: {default}).", "VERSION",
           parse_upstream_rules,
           check=parse_upstream_rules),
    on_off_option("--kb-upstream-timing", "upstream_timing", "on: a candidate that only "
                  "upstream's rules pass (it changes its inputs, say, or races) is timed too, with "
                  "the device to itself, for its upstream speedup and the fast_p of upstream's "
                  "table; off: only the candidates this harness's verdict times are, and "
                  "upstream's table counts the others as not fast, saying how many "
                  "(default: {default})."),
    Option("--kb-confine", "confine", "confine each process that runs candidate code (Landlock, "
           "a network namespace): it reads only Python, the toolchain and its own files, writes "
           "only its scratch and build folders, reaches no network and signals nothing outside "
           "itself; a candidate that tries fails with status sandbox_violation. auto: confine "
           "where the kernel can, else warn; require: stop where it cannot; off "
           "(default: {default}).", "MODE", parse_confine,
           check=parse_confine),
    Option("--kb-shard", "shard", "run only the I-th of N shards of the cases, split the same way "
           "on every machine (longest first, by the report named by --kb-costs, which every "
           "shard must be given alike; else by level); merge the shards' reports with "
           "kernelbench-report merge (default: {default}).", "I/N", parse_shard, ini=False,
           shown=lambda _: "all cases",
           check=check_shard),
    Option("--kb-resume", "resume_path", "reuse the records of an earlier run (its JSON report, "
           "or the .jsonl stream it wrote as it went) whose candidate, problem and verdict "
           "settings are unchanged; those cases are not run again (default: {default}).", "PATH",
           kind="file", ini=False, shown=lambda _: "none"),
    Option("--kb-feedback", "feedback_dir", "write, per candidate, a compact JSON and a short "
           "text for whoever writes the next attempt: the stage reached, the error and where "
           "(compiler lines, the candidate's frames, the worst element), or the speedup and "
           "speed-of-light fraction (default: {default}).", "DIR", kind="path",
           shown=lambda _: "none"),
    Option("--kb-profile", "profile", "on a CUDA device, profile one call of every timed "
           "candidate under Nsight Compute (ncu) and add each kernel's duration, memory and SM "
           "throughput and achieved occupancy to its record and feedback; takes seconds per "
           "candidate.", kind="switch",
           check=check_switch),
    Option("--kb-plot", "plot_dir", "write PNG plots of the run here: speedup per problem, "
           "fast_p against p, speedup against speed-of-light fraction (needs matplotlib: "
           "pip install 'pytest-kernelbench[plot]') (default: {default}).", "DIR", kind="path",
           shown=lambda _: "none"),
    Option("--kb-costs", "costs_path", "under xdist, hand out the most expensive cases first, as "
           "an earlier JSON report timed them (cases it does not know are estimated from their "
           "problem, the suite's problems/costs.yaml and their level); 'none' reads no report "
           "(default: {default}).", "REPORT",
           kind="costs", shown=lambda _: "the --kb-report file, when an earlier run left one"),
    Option("--kb-heartbeat", "heartbeat_s", "while a stage runs, say what runs at least this "
           "often: a line in a log that is not a terminal (a terminal shows a live line "
           "instead), a log record from the Python API (default: {default}).", "SECONDS",
           parse_seconds,
           check=SECONDS.check),
    Option("--kb-cases", "summary_cases", "above the summary's tables, list the N fastest and "
           "the N slowest timed cases (speedup, interval, verdict) and every failure (status, "
           "reason); all lists every case (default: {default}).", "N|all", parse_cases,
           shown=lambda value: "all" if value is None else str(value), check=check_cases,
           to_field=lambda value: None if value == "all" else value),
    Option("--kb-benchmark-table", "benchmark_table", "also show pytest-benchmark's table of "
           "each candidate's timed calls, which is hidden unless this, --benchmark-compare, "
           "--benchmark-histogram, --benchmark-cprofile or --benchmark-verbose asks for it; its "
           "JSON and saved runs are written either way.", kind="switch",
           check=check_switch),
    Option("--kb-report", "report_path", "write the JSON report here, and keep a numbered copy "
           "of it in history/<its name>/ beside it; 'none' writes nothing "
           "(default: {default}).", "PATH", kind="report", shown=lambda _: REPORT_DEFAULT),
    Option("--kb-compare", "compare_path", "after the tables, say what moved beyond the timing's "
           "noise since an earlier run: RUN is its number in the report's history, latest (the "
           "run before this one) or a report (default: {default}).", "RUN", kind="compare",
           ini=False, shown=lambda _: "none"),
)
REPORT_DEFAULT = "reports/kernelbench.json"


@dataclass(frozen=True)
class Settings:
    """Everything an evaluation needs, resolved from the command line and ini files or given to
    the Python API. The defaults here are the options' defaults (OPTIONS shows them in --help).
    The constructor checks each value as its option's parser does, raising SettingsError, and
    resolves once what follows from them (the fields after heartbeat_s), for every reader."""

    problems_dir: Path
    candidate_dirs: tuple[Path, ...]
    levels: tuple[int, ...] = (1, 2, 3)
    tags: tuple[str, ...] = ()
    p: float = 1.0
    trials: int = 5
    precision: str = "fp32"
    tolerance: str = "v0"  # a profile of precision.PROFILES, or "ATOL,RTOL"
    atol: float | None = None  # None: from the tolerance profile
    rtol: float | None = None
    tf32: str = "off"
    device: str = "auto"
    mode: str = "train"
    timeout_s: float = 300.0
    build_timeout_s: float = 600.0
    seed: int = 42
    report_path: Path | None = None
    compare_path: Path | None = None  # the earlier run's report that --kb-compare named
    time_budget_s: float = 1.0  # pytest-benchmark's --benchmark-max-time
    min_rounds: int = 5  # pytest-benchmark's --benchmark-min-rounds
    flag_speedup: float = 10.0
    require_kernel: bool = False
    timing: str = "events"
    drain: str = "stop"
    build_cores: str = "pause"
    target_rse: float = 0.005
    baseline: str = "eager"
    baseline_cache: Path | None = None
    baseline_max_age_s: float = 168 * 3600.0
    retime_baseline: bool = False
    build_jobs: int | None = None  # None: the cores, shared among the xdist workers
    build_cache: Path | None = None
    build_headers: bool = True  # precompiled torch headers for the builds (pch.py)
    costs_path: Path | None = None  # an earlier report whose timings order cases under xdist
    upstream_rules: str = "v0"
    upstream_timing: bool = False
    allow_input_changes: bool = False
    order_trials: bool = True
    confine: str = "auto"
    shard: tuple[int, int] | None = None  # (index from 1, count)
    resume_path: Path | None = None
    feedback_dir: Path | None = None
    profile: bool = False  # Nsight Compute metrics per kernel (ncu.py)
    plot_dir: Path | None = None
    summary_cases: int | None = 5  # timed cases the terminal summary lists; None: all
    benchmark_table: bool = False  # pytest-benchmark's own table, shown before the summary
    heartbeat_s: float = 30.0  # how often a long stage is said to be running (heartbeat.py)
    # Resolved, not given:
    summary_ps: tuple[float, ...] = field(init=False)  # fast_0, fast_1 and fast_p
    build_cache_root: Path = field(init=False)  # build_cache, else the user's cache folder

    def __post_init__(self) -> None:
        for option in OPTIONS:
            value = getattr(self, option.field)
            if value is None and FIELD_DEFAULTS[option.field] is None:
                continue  # an optional setting left unset
            try:
                option.check(value)
            except argparse.ArgumentTypeError as exc:
                raise SettingsError(f"{option.flag}: {exc}") from None
        object.__setattr__(self, "summary_ps", summary_ps(self.p))
        object.__setattr__(self, "build_cache_root", self.build_cache or default_build_cache())

    @property
    def numerics(self) -> Numerics:
        return Numerics.of(self.precision, self.tf32)


FIELD_DEFAULTS: dict[str, Any] = {f.name: f.default for f in fields(Settings) if f.init}


def bundled_problems() -> Path | None:
    """The 250-problem suite that ships with the plugin: inside the installed package (a wheel),
    or beside it in a source checkout."""
    package = Path(__file__).resolve().parent
    for root in (package / "problems", package.parent / "problems"):
        if (root / "level1").is_dir() and (root / "manifest.yaml").is_file():
            return root
    return None
