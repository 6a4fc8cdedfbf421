"""Sources that a candidate writes again at each import keep the time of their last build.

A candidate that writes its C++/CUDA files to disk and builds them with `cpp_extension.load`
gives them a new modification time in every process that imports it, and ninja, which judges by
times, compiles them all again although not a byte changed: a minute or two of nvcc in the build
process, again in the worker that imports it, and again in every later run. (`load_inline`
writes its files only when their text changed, so its builds are reused as they are.)

Before each ninja run, a source whose bytes are those of the last successful build of that
folder gets that build's time back; after a successful run, the sources' digests and times are
written beside build.ninja. A source that changed keeps its new time and is compiled again, as
ninja would compile it. The command, the flags and the objects are the ones the same bytes made.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

from pytest_kernelbench.building import ninja

RECORD = ".kb-sources.json"  # beside build.ninja: {path: [sha256, mtime_ns]} of the last build
# the files beside a source that may be its headers; nothing else of its folder is touched
SOURCE_SUFFIXES = {".c", ".cc", ".cpp", ".cxx", ".cu", ".cuh", ".h", ".hh", ".hpp", ".hxx",
                   ".inc", ".inl"}
COMPILE_STEP = re.compile(r"^build .+?: (?:compile|cuda_compile|sycl_compile) (.+)$")


def ninja_sources(ninja_text: str) -> list[Path]:
    """The source files that torch's build.ninja compiles (one per compile step)."""
    sources = []
    for line in ninja_text.splitlines():
        match = COMPILE_STEP.match(line)
        if match:
            sources.append(Path(match.group(1).replace("$:", ":").replace("$ ", " ")))
    return sources


def watched(build_directory: Path) -> list[Path]:
    """The files whose times decide a rebuild and that a candidate may write again: each
    source outside build_directory, and the C/C++/CUDA files beside it (headers it writes
    with it)."""
    ninja = build_directory / "build.ninja"
    if not ninja.is_file():
        return []
    root = build_directory.resolve()
    files: set[Path] = set()
    for source in ninja_sources(ninja.read_text(errors="replace")):
        if source.resolve().is_relative_to(root):
            continue  # torch's own copies (load_inline), written only when their text changed
        files.add(source)
        if source.parent.is_dir():
            files.update(p for p in source.parent.iterdir()
                         if p.suffix in SOURCE_SUFFIXES and p.is_file())
    return sorted(files)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def record(build_directory: Path) -> None:
    """After a successful build: the digest and time of each watched file."""
    entries = {}
    for path in watched(build_directory):
        try:
            entries[str(path)] = [digest(path), path.stat().st_mtime_ns]
        except OSError:
            continue
    (build_directory / RECORD).write_text(json.dumps(entries, sort_keys=True))


def restore_times(build_directory: Path) -> list[Path]:
    """Before a build: give each watched file whose bytes match the last build's its time from
    then. Returns the files whose time went back."""
    try:
        recorded = json.loads((build_directory / RECORD).read_text())
    except (OSError, ValueError):
        return []
    restored = []
    for name, (sha256, mtime_ns) in recorded.items():
        path = Path(name)
        try:
            stat = path.stat()
            if stat.st_mtime_ns != mtime_ns and digest(path) == sha256:
                os.utime(path, ns=(stat.st_atime_ns, mtime_ns))
                restored.append(path)
        except OSError:
            continue  # gone, unreadable or not ours to touch: ninja judges it as it is
    return restored


def keep_unchanged_sources() -> None:
    """Wrap torch's ninja runner in this process (ninja.py): restore_times before each build,
    record after each successful one."""
    def wrap(run: ninja.Runner) -> ninja.Runner:
        def keeping(build_directory, *args, **kwargs):
            folder = Path(build_directory)
            restore_times(folder)
            result = run(build_directory, *args, **kwargs)
            try:
                record(folder)
            except OSError:
                pass  # the next build compiles as ninja decides, no worse than without a record
            return result
        return keeping

    ninja.wrap_runner("keeps_times", wrap)
