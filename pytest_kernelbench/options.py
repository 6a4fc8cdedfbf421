"""Command-line options, their ini twins, and the validated settings built from them."""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

DEVICE_PATTERN = re.compile(r"^(auto|cpu|cuda(:\d+)?)$")
MODES = ("train", "eval")
TIMINGS = ("events", "graph", "auto")
UPSTREAM_RULES = ("v0", "main")
COMPILE_MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


def parse_levels(text: str) -> tuple[int, ...]:
    """'1' or '1,3' -> (1,) or (1, 3); levels are 1, 2 or 3."""
    levels = []
    for part in text.split(","):
        part = part.strip()
        if part not in {"1", "2", "3"}:
            raise argparse.ArgumentTypeError(
                f"unknown level {part!r}: use 1, 2 or 3, or a comma list such as 1,2"
            )
        levels.append(int(part))
    return tuple(sorted(set(levels)))


def _number(text: str, cast, unreadable: str, accept, rejected: str):
    """text read by cast (int or float) and checked by accept; the messages name what was wrong.

    `unreadable` may use {text} (quoted); `rejected` may use {text} (as given) and {value}.
    """
    try:
        value = cast(text)
    except ValueError:
        raise argparse.ArgumentTypeError(unreadable.format(text=repr(text))) from None
    if not accept(value):  # also false for NaN
        raise argparse.ArgumentTypeError(rejected.format(text=text, value=value))
    return value


def parse_p(text: str) -> float:
    return _number(text, float, "p must be a number, got {text}", lambda v: v >= 0,
                   "p must be >= 0 (a speedup threshold), got {text}")


def parse_tolerance(text: str) -> float:
    return _number(text, float, "tolerance must be a number, got {text}", lambda v: v >= 0,
                   "tolerance must be >= 0, got {text}")


def parse_positive_int(text: str) -> int:
    return _number(text, int, "expected a whole number, got {text}", lambda v: v >= 1,
                   "expected a number >= 1, got {value}")


def parse_seconds(text: str) -> float:
    return _number(text, float, "expected seconds, got {text}", lambda v: v > 0,
                   "expected seconds > 0, got {text}")


def parse_hours(text: str) -> float:
    return _number(text, float, "expected hours, got {text}", lambda v: v > 0,
                   "expected hours > 0, got {text}")


def parse_device(text: str) -> str:
    if not DEVICE_PATTERN.match(text):
        raise argparse.ArgumentTypeError(
            f"unknown device {text!r}: use auto, cpu, cuda or cuda:N"
        )
    return text


def parse_mode(text: str) -> str:
    if text not in MODES:
        raise argparse.ArgumentTypeError(f"mode must be eval or train, got {text!r}")
    return text


def parse_timing(text: str) -> str:
    if text not in TIMINGS:
        raise argparse.ArgumentTypeError(f"timing must be events, graph or auto, got {text!r}")
    return text


def parse_upstream_rules(text: str) -> str:
    if text not in UPSTREAM_RULES:
        raise argparse.ArgumentTypeError(f"upstream rules must be v0 or main, got {text!r}")
    return text


def parse_baseline(text: str) -> str:
    """'eager', 'compile' or 'compile:MODE' with a torch.compile mode."""
    kind, _, mode = text.partition(":")
    if kind == "eager" and not mode or kind == "compile" and (not mode or mode in COMPILE_MODES):
        return text
    raise argparse.ArgumentTypeError(
        f"unknown baseline {text!r}: use eager, compile or compile:MODE with MODE one of "
        + ", ".join(COMPILE_MODES))


def parse_confine(text: str) -> str:
    from pytest_kernelbench.confine import MODES

    if text not in MODES:
        raise argparse.ArgumentTypeError(f"confinement must be auto, require or off, got {text!r}")
    return text


def parse_shard(text: str) -> tuple[int, int]:
    from pytest_kernelbench.schedule import parse_shard as parse

    try:
        return parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"shard: {exc}") from None


def parse_fraction(text: str) -> float:
    return _number(text, float, "expected a number, got {text}", lambda v: 0 <= v < 1,
                   "expected a fraction in [0, 1), got {text}")


def parse_jobs(text: str) -> int:
    return _number(text, int, "expected a whole number, got {text}", lambda v: v >= 0,
                   "expected a number >= 0, got {value}")


def parse_tags(text: str) -> tuple[str, ...]:
    return tuple(tag.strip() for tag in text.split(",") if tag.strip())


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("kernelbench", "KernelBench kernel evaluation")
    group.addoption(
        "--kb-candidates", dest="kb_candidates", action="append", default=[], metavar="DIR",
        help="folder of candidate kernels (ModelNew); repeat to compare several sets. "
        "Evaluation is off unless at least one is given (ini: kb_candidates).",
    )
    group.addoption(
        "--kb-problems", dest="kb_problems", metavar="DIR", default=None,
        help="problem folder with level<N>/<id>_<Name>.py files (default: ini kb_problems, "
        "else ./problems).",
    )
    group.addoption(
        "--kb-level", dest="kb_level", type=parse_levels, metavar="N[,N]", default=None,
        help="levels to evaluate, e.g. 1 or 1,2 (default: all).",
    )
    group.addoption(
        "--kb-tags", dest="kb_tags", type=parse_tags, metavar="TAG[,TAG]", default=None,
        help="only problems carrying one of these manifest tags, e.g. conv,norm (default: all).",
    )
    group.addoption(
        "--kb-p", dest="kb_p", type=parse_p, metavar="P", default=None,
        help="speedup threshold: a speed item passes iff speedup > P; the summary reports "
        "fast_P (default: 1.0).",
    )
    group.addoption(
        "--kb-trials", dest="kb_trials", type=parse_positive_int, metavar="N", default=None,
        help="correctness trials, each on freshly drawn inputs (default: 5).",
    )
    group.addoption(
        "--kb-atol", dest="kb_atol", type=parse_tolerance, metavar="X", default=None,
        help="absolute tolerance (default: 1e-2).",
    )
    group.addoption(
        "--kb-rtol", dest="kb_rtol", type=parse_tolerance, metavar="X", default=None,
        help="relative tolerance (default: 1e-2).",
    )
    group.addoption(
        "--kb-device", dest="kb_device", type=parse_device, metavar="DEV", default=None,
        help="auto, cpu, cuda or cuda:N (default: auto = cuda when available, else cpu).",
    )
    group.addoption(
        "--kb-mode", dest="kb_mode", type=parse_mode, metavar="MODE", default=None,
        help="run models in train or eval mode (default: train, as upstream KernelBench: batch "
        "norm uses batch statistics; shipped problems keep dropout at p=0).",
    )
    group.addoption(
        "--kb-timeout", dest="kb_timeout", type=parse_seconds, metavar="SECONDS", default=None,
        help="limit for each stage of each candidate (compile, correct with all its trials, "
        "speed with all its timing); past it the stage fails with status timeout (default: "
        "300).",
    )
    group.addoption(
        "--kb-build-timeout", dest="kb_build_timeout", type=parse_seconds, metavar="SECONDS",
        default=None,
        help="limit for each extension build run ahead of the items (default: 600).",
    )
    group.addoption(
        "--kb-seed", dest="kb_seed", type=int, metavar="N", default=None,
        help="base seed for weights and inputs (default: 42).",
    )
    group.addoption(
        "--kb-flag-speedup", dest="kb_flag_speedup", type=parse_p, metavar="X", default=None,
        help="flag speedups above X in the report for a look by hand (default: 10).",
    )
    group.addoption(
        "--kb-require-kernel", dest="kb_require_kernel", action="store_true", default=False,
        help="fail the speed item of a candidate that ran no GPU kernel of its own "
        "(status torch_only; detected on CUDA). Default: report it as a flag only.",
    )
    group.addoption(
        "--kb-timing", dest="kb_timing", type=parse_timing, metavar="HOW", default=None,
        help="events: CUDA events around each eager call (as upstream KernelBench); graph: "
        "replay each side from a CUDA graph (no launch overhead; falls back to events with a "
        "note when a side cannot be captured); auto: graph for launch-bound problems, whose "
        "eager baseline takes under 50 us per call (default: events).",
    )
    group.addoption(
        "--kb-rse", dest="kb_rse", type=parse_fraction, metavar="X", default=None,
        help="stop timing once the median of each side is known to this relative standard "
        "error, e.g. 0.005 = 0.5%%; --benchmark-max-time still caps the time (default: 0.005; "
        "0 always spends the budget).",
    )
    group.addoption(
        "--kb-baseline", dest="kb_baseline", type=parse_baseline, metavar="B", default=None,
        help="what candidates are timed against: eager, compile or compile:MODE "
        "(torch.compile; MODE e.g. max-autotune). Correctness is always judged against eager "
        "(default: eager).",
    )
    group.addoption(
        "--kb-baseline-cache", dest="kb_baseline_cache", metavar="DIR", default=None,
        help="reuse baseline timings kept in DIR, keyed by GPU, driver, torch, problem source, "
        "baseline and timing mode; missing or stale ones are timed in the pytest process and "
        "stored. The candidate is then timed alone, not in turns with the baseline "
        "(default: off).",
    )
    group.addoption(
        "--kb-baseline-max-age", dest="kb_baseline_max_age", type=parse_hours,
        metavar="HOURS", default=None,
        help="cached baseline timings older than this are stale (default: 168).",
    )
    group.addoption(
        "--kb-retime-baseline", dest="kb_retime_baseline", action="store_true", default=False,
        help="time every baseline afresh and overwrite the cache entries.",
    )
    group.addoption(
        "--kb-build-jobs", dest="kb_build_jobs", type=parse_jobs, metavar="N", default=None,
        help="build candidates' C++/CUDA extensions N at a time before any item runs; 0 builds "
        "each when its compile item runs (default: CPU cores, shared among xdist workers).",
    )
    group.addoption(
        "--kb-build-cache", dest="kb_build_cache", metavar="DIR", default=None,
        help="content-addressed folder of built extensions, shareable between runs and "
        "machines (default: ~/.cache/pytest-kernelbench/extensions).",
    )
    group.addoption(
        "--kb-allow-input-changes", dest="kb_allow_input_changes", action="store_true",
        default=False,
        help="let forward change its input tensors, as upstream KernelBench does. Default: a "
        "candidate that changes an input its reference leaves alone fails (mutated_input): in "
        "a real model that input may be used again.",
    )
    group.addoption(
        "--kb-upstream-rules", dest="kb_upstream_rules", type=parse_upstream_rules,
        metavar="VERSION", default=None,
        help="the upstream KernelBench rules each record's `upstream` verdict and the second "
        "summary table follow: v0 (atol = rtol = 1e-2, as in the paper) or main (1e-4 for "
        "fp32) (default: v0).",
    )
    group.addoption(
        "--kb-confine", dest="kb_confine", type=parse_confine, metavar="MODE", default=None,
        help="confine each process that runs candidate code (Landlock, a network namespace): "
        "it reads only Python, the toolchain and its own files, writes only its scratch and "
        "build folders, reaches no network and signals nothing outside itself; a candidate "
        "that tries fails with status sandbox_violation. auto: confine where the kernel can, "
        "else warn; require: stop where it cannot; off (default: auto).",
    )
    group.addoption(
        "--kb-shard", dest="kb_shard", type=parse_shard, metavar="I/N", default=None,
        help="run only the I-th of N shards of the cases, split the same way on every machine "
        "(longest first, by the report named by --kb-costs, which every shard must be given "
        "alike; else by level); merge the shards' reports with kernelbench-report merge "
        "(default: all cases).",
    )
    group.addoption(
        "--kb-resume", dest="kb_resume", metavar="PATH", default=None,
        help="reuse the records of an earlier run (its JSON report, or the .jsonl stream it "
        "wrote as it went) whose candidate, problem and verdict settings are unchanged; those "
        "cases are not run again (default: none).",
    )
    group.addoption(
        "--kb-feedback", dest="kb_feedback", metavar="DIR", default=None,
        help="write, per candidate, a compact JSON and a short text for whoever writes the next "
        "attempt: the stage reached, the error and where (compiler lines, the candidate's "
        "frames, the worst element), or the speedup and speed-of-light fraction "
        "(default: none).",
    )
    group.addoption(
        "--kb-costs", dest="kb_costs", metavar="REPORT", default=None,
        help="under xdist, hand out the most expensive cases first, as an earlier JSON report "
        "timed them; 'none' keeps the problem order (default: the --kb-report file, when an "
        "earlier run left one; cases it does not know are estimated from their problem and "
        "level).",
    )
    group.addoption(
        "--kb-report", dest="kb_report", metavar="PATH", default=None,
        help="write the JSON report here (default: ini kb_report, else "
        "reports/kernelbench.json); 'none' writes nothing.",
    )
    ini_help = {
        "kb_candidates": "candidate folders, one per line",
        "kb_problems": "problem folder",
        "kb_level": "levels, e.g. 1,2",
        "kb_p": "speedup threshold p",
        "kb_device": "auto, cpu, cuda or cuda:N",
        "kb_timeout": "per-stage limit in seconds",
        "kb_report": "JSON report path",
    }
    for name, text in ini_help.items():
        if name == "kb_candidates":
            parser.addini(name, text, type="linelist")
        else:
            parser.addini(name, text, type="string")


@dataclass(frozen=True)
class Settings:
    """Everything an evaluation needs, resolved from the command line and ini."""

    problems_dir: Path
    candidate_dirs: tuple[Path, ...]
    levels: tuple[int, ...] = (1, 2, 3)
    tags: tuple[str, ...] = ()
    p: float = 1.0
    trials: int = 5
    atol: float = 1e-2
    rtol: float = 1e-2
    device: str = "auto"
    mode: str = "train"
    timeout_s: float = 300.0
    build_timeout_s: float = 600.0
    seed: int = 42
    report_path: Path | None = None
    time_budget_s: float = 1.0
    min_rounds: int = 5
    flag_speedup: float = 10.0
    require_kernel: bool = False
    timing: str = "events"
    target_rse: float = 0.005
    baseline: str = "eager"
    baseline_cache: Path | None = None
    baseline_max_age_s: float = 168 * 3600.0
    retime_baseline: bool = False
    build_jobs: int | None = None  # None: one per CPU core, shared among xdist workers
    build_cache: Path | None = None
    costs_path: Path | None = None  # an earlier report whose timings order cases under xdist
    upstream_rules: str = "v0"
    allow_input_changes: bool = False
    confine: str = "auto"
    shard: tuple[int, int] | None = None  # (index from 1, count)
    resume_path: Path | None = None
    feedback_dir: Path | None = None


def read_settings(config: pytest.Config) -> Settings | None:
    """Validated settings, or None when no candidate set was asked for (plugin stays idle)."""
    cli_base = Path(config.invocation_params.dir)
    ini_base = config.inipath.parent if config.inipath else config.rootpath

    def path_option(name: str, default: str) -> tuple[str, Path]:
        # Command-line paths are relative to where pytest was started, ini paths to the ini file.
        value = config.getoption(name)
        if value:
            return value, cli_base
        return config.getini(name) or default, ini_base

    def parsed_option(name: str, parse, default):
        value = config.getoption(name)
        if value is not None:
            return value
        text = config.getini(name)
        if not text:
            return default
        try:
            return parse(text)
        except argparse.ArgumentTypeError as exc:
            raise pytest.UsageError(f"ini option {name}: {exc}") from None

    if config.getoption("kb_candidates"):
        raw_sets = [(text, cli_base) for text in config.getoption("kb_candidates")]
    else:
        raw_sets = [(text, ini_base) for text in config.getini("kb_candidates")]
    if not raw_sets:
        return None
    candidate_dirs = tuple(_existing_dir(text, base, "--kb-candidates") for text, base in raw_sets)
    names = [path.name for path in candidate_dirs]
    if len(set(names)) != len(names):
        raise pytest.UsageError(
            f"--kb-candidates: two sets share a folder name ({', '.join(names)}); "
            "set names come from folder names and must differ"
        )
    problems_text, problems_base = path_option("kb_problems", "problems")
    bundled = bundled_problems()
    if problems_text == "problems" and not (problems_base / "problems").is_dir() and bundled:
        problems_text, problems_base = str(bundled), bundled.parent  # the suite that ships
    report_text, report_base = path_option("kb_report", "reports/kernelbench.json")
    report_path = None if report_text.lower() == "none" else report_base / report_text
    return Settings(
        problems_dir=_existing_dir(problems_text, problems_base, "--kb-problems"),
        candidate_dirs=candidate_dirs,
        levels=parsed_option("kb_level", parse_levels, (1, 2, 3)),
        tags=config.getoption("kb_tags") or (),
        p=parsed_option("kb_p", parse_p, 1.0),
        trials=config.getoption("kb_trials") or 5,
        atol=_default(config.getoption("kb_atol"), 1e-2),
        rtol=_default(config.getoption("kb_rtol"), 1e-2),
        device=parsed_option("kb_device", parse_device, "auto"),
        mode=config.getoption("kb_mode") or "train",
        timeout_s=parsed_option("kb_timeout", parse_seconds, 300.0),
        build_timeout_s=_default(config.getoption("kb_build_timeout"), 600.0),
        seed=_default(config.getoption("kb_seed"), 42),
        report_path=report_path,
        time_budget_s=float(_benchmark_option(config, "benchmark_max_time", 1.0)),
        min_rounds=int(_benchmark_option(config, "benchmark_min_rounds", 5)),
        flag_speedup=_default(config.getoption("kb_flag_speedup"), 10.0),
        require_kernel=bool(config.getoption("kb_require_kernel")),
        timing=config.getoption("kb_timing") or "events",
        target_rse=_default(config.getoption("kb_rse"), 0.005),
        baseline=config.getoption("kb_baseline") or "eager",
        baseline_cache=_optional_path(config.getoption("kb_baseline_cache"), cli_base),
        baseline_max_age_s=_default(config.getoption("kb_baseline_max_age"), 168.0) * 3600,
        retime_baseline=bool(config.getoption("kb_retime_baseline")),
        build_jobs=config.getoption("kb_build_jobs"),
        build_cache=_optional_path(config.getoption("kb_build_cache"), cli_base),
        costs_path=_costs_path(config.getoption("kb_costs"), cli_base, report_path),
        upstream_rules=config.getoption("kb_upstream_rules") or "v0",
        allow_input_changes=bool(config.getoption("kb_allow_input_changes")),
        confine=config.getoption("kb_confine") or "auto",
        shard=config.getoption("kb_shard"),
        resume_path=_existing_file(config.getoption("kb_resume"), cli_base, "--kb-resume"),
        feedback_dir=_optional_path(config.getoption("kb_feedback"), cli_base),
    )


def _default(value, default):
    return default if value is None else value


def _benchmark_option(config: pytest.Config, name: str, default):
    # Timing budgets follow pytest-benchmark's own options when that plugin is loaded.
    try:
        value = config.getoption(name)
    except ValueError:
        return default
    return default if value is None else value


def _optional_path(text: str | None, base: Path) -> Path | None:
    return None if not text else (base / Path(text).expanduser()).resolve()


def _costs_path(text: str | None, base: Path, report_path: Path | None) -> Path | None:
    """--kb-costs as given (it must exist), else an earlier run's report when there is one."""
    if text is None:
        return report_path if report_path is not None and report_path.is_file() else None
    if text.lower() == "none":
        return None
    path = (base / Path(text).expanduser()).resolve()
    if not path.is_file():
        raise pytest.UsageError(f"--kb-costs: no such file: {text}")
    return path


def _existing_dir(text: str, base: Path, option: str) -> Path:
    path = (base / Path(text).expanduser()).resolve()
    if not path.is_dir():
        raise pytest.UsageError(f"{option}: no such folder: {text}")
    return path


def _existing_file(text: str | None, base: Path, option: str) -> Path | None:
    if not text:
        return None
    path = (base / Path(text).expanduser()).resolve()
    if not path.is_file():
        raise pytest.UsageError(f"{option}: no such file: {text}")
    return path


def bundled_problems() -> Path | None:
    """The 250-problem suite that ships with the plugin: inside the installed package (a wheel),
    or beside it in a source checkout."""
    package = Path(__file__).resolve().parent
    for root in (package / "problems", package.parent / "problems"):
        if (root / "level1").is_dir() and (root / "manifest.yaml").is_file():
            return root
    return None
