"""Building candidates' C++/CUDA extensions ahead of GPU work, in a content-addressed cache.

A candidate that calls `torch.utils.cpp_extension.load_inline` (or `load`) builds when it is
imported, when its model is constructed, or at its first call; the build process tries each in
turn, with no GPU and on the CPU, until one has built. Each such candidate gets its own
extension folder, named by a digest of its source and the toolchain (torch, CUDA, nvcc, Python,
target architectures): the same source reuses its build across runs, candidate sets and
machines sharing the cache, and two candidates that pick the same
extension name never overwrite each other. The missing builds run in parallel while the items
run (pool.py), each in its own `python -m pytest_kernelbench.building.process FILE` process with no GPU
visible (a build needs none), so the GPU is never idle waiting on nvcc one candidate at a time;
a case's compile item waits for its own build only. Concurrent pytest-xdist workers share the
work: each build holds a lock on its folder; a worker starts the builds no one holds, an item
waits for one another worker is running, and imports a candidate only while holding its
folder's lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pytest_kernelbench import faults
from pytest_kernelbench.building import ninja
from pytest_kernelbench.suite.discovery import Case

NEEDS_BUILD = re.compile(r"\bcpp_extension\b|\bload_inline\b")
CUDA_ONLY = re.compile(r"__global__|cuda_sources|\.cuda\(\)|device\s*=\s*['\"]cuda")
BUILT_MARKER = ".kb-built"
FAILED_MARKER = ".kb-failed"  # the compiler's first lines, for a source that failed to build
DEFERRED_MARKER = ".kb-deferred"  # its import built nothing without a GPU: left to its item
# its import builds again whatever is cached (it rewrites its sources, say): left to its item
REBUILDS_MARKER = ".kb-rebuilds"
FAILED_LINE = "kernelbench: extension build failed"  # echoed by echo_build_errors
LOCK_FILE = ".kb-lock"
# torch.utils.cpp_extension's own build lock, a file in each extension's build folder: a build
# killed while it held one (a timeout, the end of a run) leaves it, and every later build of
# that extension waits for it to go, forever.
TORCH_BATON = "lock"
LOG_FILE = "build.log"
HEADERS_FOLDER = "pch"  # beneath the cache root: precompiled torch headers (pch.py)
POLL_S = 0.1
BUILD_NICENESS = 10  # compilers yield to the processes that judge and time candidates


def build_niceness(own: int) -> int:
    """The niceness of a compiler started by a thread at niceness `own`: BUILD_NICENESS, and
    never as high a priority as its starter's (a Ray actor's threads run at 15), so compilers
    stay below the judges beside them."""
    return min(19, max(BUILD_NICENESS, own + 1))


def needs_build(source: str) -> bool:
    return bool(NEEDS_BUILD.search(source))


def needs_cuda(source: str) -> bool:
    """Whether a candidate's source can only run on a CUDA device."""
    return bool(CUDA_ONLY.search(source))


def cuda_arch(device: str) -> str:
    """TORCH_CUDA_ARCH_LIST for builds: the user's, else the device's own (e.g. '9.0')."""
    if os.environ.get("TORCH_CUDA_ARCH_LIST") or not device.startswith("cuda"):
        return os.environ.get("TORCH_CUDA_ARCH_LIST", "")
    import torch

    major, minor = torch.cuda.get_device_capability(device)
    return f"{major}.{minor}"


@functools.cache
def nvcc_version() -> str:
    try:
        done = subprocess.run(["nvcc", "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return "none"
    lines = done.stdout.strip().splitlines()
    return lines[-1] if lines else "none"


def toolchain(arch: str) -> dict:
    import torch

    return {"torch": torch.__version__, "cuda": torch.version.cuda, "nvcc": nvcc_version(),
            "python": platform.python_version(), "cxx": os.environ.get("CXX", "c++"), "arch": arch}


def build_folder(cache_root: Path, source: bytes, tools: dict) -> Path:
    digest = hashlib.sha256(source + json.dumps(tools, sort_keys=True).encode()).hexdigest()
    return cache_root / digest[:24]


def build_env(folder: Path, arch: str) -> dict[str, str]:
    """What the process that imports the candidate needs to build into, or load from, folder."""
    env = {"TORCH_EXTENSIONS_DIR": str(folder)}
    if arch:
        env["TORCH_CUDA_ARCH_LIST"] = arch
    return env


@dataclass
class Build:
    candidate: Path
    folder: Path
    # built, cached, deferred (nothing to build without a GPU or before the first call),
    # failed, elsewhere (another worker has it), cancelled (dropped from its pool's queue)
    status: str = "pending"
    seconds: float = 0.0
    message: str = ""
    problem: Path | None = None  # whose init inputs construct the model, for a build there
    # where its time went: queued_s (waiting for a free build slot), then from ninja's log the
    # compilers' own seconds (cxx_s: the C++ binding files, nvcc_s: the CUDA files, link_s)
    # and ninja_s (ninja's wall time), and process_s (the build process's own: the interpreter,
    # `import torch`, the candidate's import up to its build)
    phases: dict[str, float] = field(default_factory=dict)
    span: tuple[float, float] | None = None  # its process's start and end (time.time())

    def entry(self) -> dict:
        """The report's entry for this build."""
        entry = {"candidate": str(self.candidate), "status": self.status,
                 "seconds": round(self.seconds, 3), "message": self.message}
        if self.phases:
            entry["phases"] = {name: round(value, 3) for name, value in self.phases.items()}
        if self.span:
            entry["span"] = [round(at, 3) for at in self.span]
        return entry


def plan(candidates: list[Path], cache_root: Path, arch: str,
         problems: dict[Path, Path] | None = None) -> list[Build]:
    """One build per distinct source among the candidates that need one. A source that failed
    to build with this toolchain before is not built again: its compiler lines are kept."""
    tools = toolchain(arch)
    builds: dict[Path, Build] = {}
    for path in candidates:
        source = path.read_bytes()
        if not needs_build(source.decode(errors="replace")):
            continue
        folder = build_folder(cache_root, source, tools)
        if folder not in builds:
            build = builds[folder] = Build(path, folder, problem=(problems or {}).get(path))
            if not intact(folder):
                discard(folder)
                build.message = "its cached build had changed since it was built"
            else:
                settled(build)
    return list(builds.values())


def build_jobs(requested: int | None, processes: int, cores: int | None = None) -> int:
    """How many builds each of `processes` processes (xdist workers) runs at once: the requested
    number, else its share of the cores (`cores`: those the builds may use, by default all; the
    builds stop while any timing runs unless the timings have cores of their own, and run
    niced)."""
    if requested is not None:
        return requested
    return max(1, (cores or os.cpu_count() or 1) // processes)


def compiler_jobs(jobs: int, processes: int, cores: int | None = None) -> int:
    """ninja's parallel steps per build (MAX_JOBS), so that the builds of all `processes`
    processes, `jobs` each at a time, run no more compilers than the builds have cores: the
    user's MAX_JOBS where set."""
    if os.environ.get("MAX_JOBS", "").isdigit():
        return int(os.environ["MAX_JOBS"])
    return max(1, (cores or os.cpu_count() or 1) // max(1, jobs * processes))


def candidates_to_build(cases: Iterable[Case], device: str) -> dict[Path, Path]:
    """The selected candidates that may build, each with its problem's file (a candidate that
    builds in __init__ is constructed in its build process, with its problem's init inputs).
    In the items' order, so that the first items' builds are the first done; on the CPU without
    the CUDA-only candidates, which are skipped there."""
    problems: dict[Path, Path] = {}
    for case in cases:
        if case.candidate is not None:
            problems[case.candidate.path] = case.problem.path
    if device == "cpu":
        return {path: problem for path, problem in problems.items()
                if not needs_cuda(path.read_text(errors="replace"))}
    return problems


def settled(build: Build) -> bool:
    """Whether the build's folder says it needs no build (built, failed or deferred before,
    here or by another worker); if so, the build takes that status."""
    folder = build.folder
    if (folder / BUILT_MARKER).exists():
        build.status = "cached"
    elif (folder / FAILED_MARKER).exists():
        build.status = "failed"
        build.message = "failed before: " + failure(folder)
    elif (folder / DEFERRED_MARKER).exists() or (folder / REBUILDS_MARKER).exists():
        build.status = "deferred"
    else:
        return False
    return True


def failure(folder: Path) -> str:
    """The recorded compiler lines of a build that failed ('' when none did)."""
    marker = folder / FAILED_MARKER
    return marker.read_text(errors="replace") if marker.exists() else ""


@contextlib.contextmanager
def holding(folder: Path, while_waiting: Callable[[], contextlib.AbstractContextManager]
            = contextlib.nullcontext) -> Iterator[None]:
    """Hold a build folder's lock, so that no other process builds into it meanwhile.

    Importing a candidate while another process builds its extension fails: torch waits for
    that build, then loads whatever is there, and a failed build leaves nothing to load. A
    wait for another process's build runs inside while_waiting() (a device hold stepped
    aside: a build takes a minute).
    """
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / LOCK_FILE, "a+") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            with while_waiting():
                fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            clear_stale_batons(folder)
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def clear_stale_batons(folder: Path) -> list[Path]:
    """Remove torch's build locks (TORCH_BATON) beneath a build folder whose own lock this
    process holds: no build of the run is under way there then, so each one was left by a
    build that was killed. (A build at a later call inside an item takes no folder lock; only
    another case with the same source could meet one of those.)"""
    stale = [baton for baton in folder.rglob(TORCH_BATON) if baton.is_file()]
    for baton in stale:
        baton.unlink(missing_ok=True)
    return stale


def finish(build: Build, returncode: int, overdue: bool, timeout_s: float) -> None:
    """What a build process's end makes of its build: built (and sealed), failed (recorded
    as the source's failure only where its compiler failed), or deferred to a GPU."""
    shutil.rmtree(build.folder / "scratch", ignore_errors=True)
    steps = compiler_seconds(build.folder)
    if steps:
        build.phases.update(steps)
        # build.seconds leaves out the pauses, ninja's log (its wall clock) does not
        build.phases["process_s"] = max(
            0.0, build.seconds + build.phases.get("paused_s", 0.0) - steps["ninja_s"])
    built = any(build.folder.rglob("*.so"))
    log = (build.folder / LOG_FILE).read_text(errors="replace")
    first = faults.first_error_lines(log, limit=1) or f"exit status {returncode}"
    if built:
        # The import may still fail afterwards (no GPU here); the compile item judges that.
        build.status = "built"
        seal(build.folder, build.candidate)
    elif overdue:
        build.status = "failed"  # not recorded as the source's failure: a busy machine may
        build.message = f"no result within {timeout_s:g} s"  # finish it next time
    elif FAILED_LINE in log:
        # The compiler failed, even where the candidate caught the error and fell back to
        # PyTorch: recorded, so that no item runs the same compiler on the same source again.
        build.status = "failed"
        build.message = faults.one_line(first)
        _write_failure(build.folder, log)
    elif returncode != 0:
        # The import failed before any compiler ran (e.g. it needs the GPU this process has
        # not): not the source's build failure; its compile item tries with a GPU.
        build.status = "failed"
        build.message = faults.one_line(first)
    else:
        build.status = "deferred"  # it builds only with a GPU, or at its first call
        (build.folder / DEFERRED_MARKER).write_text("")  # the other workers need not try


def compiler_seconds(folder: Path) -> dict[str, float]:
    """Seconds of the compiler steps of the builds beneath folder, from each ninja log there
    (lines `start_ms end_ms mtime output hash`, the last line of an output counting): the C++
    compiles (cxx_s), the CUDA compiles (nvcc_s, outputs `*.cuda.o`), the links (link_s), and
    ninja's wall time (ninja_s: steps run side by side). {} where ninja ran no step."""
    steps: dict[str, tuple[int, int]] = {}
    for log in folder.rglob(".ninja_log"):
        for line in log.read_text(errors="replace").splitlines():
            fields = line.split("\t")
            if len(fields) == 5 and fields[0].isdigit() and fields[1].isdigit():
                steps[f"{log.parent}/{fields[3]}"] = (int(fields[0]), int(fields[1]))
    if not steps:
        return {}
    seconds = {"cxx_s": 0.0, "nvcc_s": 0.0, "link_s": 0.0}
    for output, (start, end) in steps.items():
        kind = "nvcc_s" if output.endswith(".cuda.o") else "cxx_s" if output.endswith(".o") \
            else "link_s"
        seconds[kind] += (end - start) / 1000
    by_log: dict[str, list[tuple[int, int]]] = {}
    for output, span in steps.items():
        by_log.setdefault(output.rsplit("/", 1)[0], []).append(span)
    seconds["ninja_s"] = sum((max(e for _, e in spans) - min(s for s, _ in spans)) / 1000
                             for spans in by_log.values())
    return seconds


def first_errors(transcript: str) -> str:
    """A compiler transcript's first three errors, on one line."""
    return faults.one_line(faults.first_error_lines(transcript, limit=3).replace("\n", " | "))


def failure_line(transcript: str) -> str:
    """The line echo_build_errors prints for a failed build: FAILED_LINE, then the compiler's
    first errors."""
    return f"{FAILED_LINE}: {first_errors(transcript)}"


def failure_lines(log: str) -> list[str]:
    """The failure_line()s in a worker's output."""
    return [line for line in log.splitlines() if line.startswith(FAILED_LINE)]


def _write_failure(folder: Path, log: str) -> None:
    echoed = [line[len(FAILED_LINE):].lstrip(": ") for line in failure_lines(log)]
    errors = next((line for line in reversed(echoed) if line), "") or first_errors(log)
    (folder / FAILED_MARKER).write_text(errors)


def remember_failure(folder: Path, log: str, loaded: list[str]) -> bool:
    """Record a compiler failure in a worker (a build the build phase could not reach, at
    import with a GPU or at a later call) as the build phase records its own: the same source
    with the same toolchain then fails at once with these lines, in later items and runs.
    Not where the candidate built or loaded anything: a replay would fail that build too."""
    if FAILED_LINE not in log or loaded or any(folder.rglob("*.so")) \
            or (folder / FAILED_MARKER).exists():
        return False
    _write_failure(folder, log)
    return True


def libraries(folder: Path) -> dict[str, str]:
    """sha256 of each shared library beneath a build folder, by path relative to it."""
    return {str(lib.relative_to(folder)): hashlib.sha256(lib.read_bytes()).hexdigest()
            for lib in sorted(folder.rglob("*.so"))}


def seal(folder: Path, candidate: Path) -> None:
    """Mark a build done, with digests of what it made; written by the pytest process only."""
    (folder / BUILT_MARKER).write_text(json.dumps({"candidate": str(candidate),
                                                   "libraries": libraries(folder)}))


def intact(folder: Path) -> bool:
    """Whether a sealed build still holds exactly the libraries it was sealed with (an unsealed
    folder has nothing to check). A library changed since then, by anyone, is not loaded."""
    marker = folder / BUILT_MARKER
    if not marker.exists():
        return True
    try:
        sealed = json.loads(marker.read_text()).get("libraries")
    except (ValueError, AttributeError):
        return False
    return sealed == libraries(folder)


def left_to_its_item(folder: Path) -> None:
    """A sealed build that its candidate's own import built again: the seal goes, and later
    runs leave the build to the candidate's item, not building it ahead only for the import
    to build it once more (a minute of a worker's waiting, in every run)."""
    (folder / REBUILDS_MARKER).write_text("")
    (folder / BUILT_MARKER).unlink(missing_ok=True)


def sealable(folder: Path) -> bool:
    """Whether a build made in a worker is sealed: not when sealed already, nor when its
    import builds again anyway (its libraries would never match the seal)."""
    return not (folder / BUILT_MARKER).exists() and not (folder / REBUILDS_MARKER).exists()


def discard(folder: Path) -> None:
    """Forget a build whose libraries cannot be trusted: the next import builds it afresh."""
    (folder / BUILT_MARKER).unlink(missing_ok=True)
    for lib in folder.rglob("*.so"):
        lib.unlink()


def within(folder: Path, libraries: list[str]) -> list[str]:
    """The libraries that lie in folder (a candidate may also build into a folder of its own)."""
    root = folder.resolve()
    return [lib for lib in libraries if Path(lib).resolve().is_relative_to(root)]


EXTENSION_STATES = ("none", "built", "cached", "failed", "not_loaded")


def extension_status(folder: Path, loaded: list[str], since_s: float,
                     worker_log: str) -> tuple[str, str | None]:
    """(state, compiler error) of a candidate's own extension, as the record reports it.

    built / cached: its library is loaded (built at or after since_s, or before); not_loaded:
    a library was built but the candidate never loaded it; failed: nothing was built, with the
    first compiler lines from the build log or the worker's output. A candidate whose own
    extension failed or went unloaded and that still passes ran PyTorch instead.
    """
    if loaded:
        fresh = any(Path(lib).stat().st_mtime >= since_s for lib in loaded if Path(lib).exists())
        return ("built" if fresh else "cached"), None
    if any(folder.rglob("*.so")):
        return "not_loaded", None
    log = (folder / LOG_FILE).read_text(errors="replace") if (folder / LOG_FILE).exists() else ""
    errors = faults.first_error_lines(log + "\n" + worker_log, limit=3)
    return "failed", (faults.one_line(errors) if errors else None)


def echo_build_errors() -> None:
    """Print the compiler's output when an extension build fails, before torch turns it into
    an exception that a candidate's own try/except may swallow: the record can then say why a
    candidate runs without its kernel. (Wraps torch's private ninja runner, where it exists.)
    """
    def wrap(run: ninja.Runner) -> ninja.Runner:
        def echoing(*args, **kwargs):
            try:
                return run(*args, **kwargs)
            except RuntimeError as exc:
                # The transcript, then its first errors on one line: what is read back of a
                # worker's output is its tail (a transcript runs to kilobytes of command lines).
                print(f"{exc}\n{failure_line(str(exc))}", file=sys.stderr, flush=True)
                raise
        return echoing

    ninja.wrap_runner("echoes", wrap)


def replay_failure(folder: Path) -> None:
    """Make a build of this folder fail at once with its recorded compiler lines, when the same
    source failed to build with the same toolchain before: attempted once, not in every item
    (a module-level build that fails costs 45-77 s of nvcc each time)."""
    recorded = failure(folder)
    if not recorded:
        return

    def replay(*args, **kwargs):
        raise RuntimeError(f"Error building extension (failed before with this source and "
                           f"toolchain, not attempted again): {recorded}")

    ninja.wrap_runner("replays", lambda run: replay)
