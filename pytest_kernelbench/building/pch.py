"""Precompiled torch headers for the C++ binding file of candidates' extensions.

Every `load_inline` extension compiles a C++ file that opens with `#include <torch/extension.h>`,
and parsing that header is most of the file's compile time. gcc can load a header compiled once
(`torch/extension.h.gch`) instead, if the compiler and its flags are the ones the header was
compiled with. Here such a header is made once per compile command (the same flags, the
extension's name left out) and kept under the build cache:

- The harness builds it, from the flags a candidate's source passes as literals, with torch's
  own build-file writer; never in a process that runs candidate code, which cannot write there
  either (the confinement lets build processes read it only).
- A build process finds it through gcc's CPATH, searched before the `-isystem` folders where
  torch's headers lie; the candidate's command line stays as it was, and the object file is the
  same byte for byte. A build whose command has no precompiled header, or whose flags make gcc
  reject it, parses the header as before.
"""

from __future__ import annotations

import ast
import contextlib
import fcntl
import hashlib
import inspect
import json
import os
import re
import shlex
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from pytest_kernelbench.building import ninja

HEADER = Path("torch") / "extension.h"
PRECOMPILED = HEADER.with_name("extension.h.gch")
FAILED = ".kb-pch-failed"
ROOT_ENV = "KB_PCH_ROOT"  # where a build process looks for precompiled headers
# A header costs about one and a half C++ compiles of an extension and saves about half of each:
# made only where at least this many planned builds share its command.
MIN_USES = 3
WAIT_POLL_S = 0.1
NAME_DEFINE = re.compile(r"^-DTORCH_EXTENSION_NAME=")
# Flags a candidate may pass for a precompiled header to be made for it; any other flag (a
# plugin, an extra include, an output path) and none is made.
SAFE_FLAG = re.compile(r"^-(O[0-3sgz]?|std=[\w+]+|[DU]\w+(=[\w.+-]*)?|f(?!plugin)[\w-]+(=[\w.+-]+)?"
                       r"|W(?![a-z],)[\w=-]*|m[\w=.-]+|g[0-3]?|pthread|w)$")


def ninja_variables(text: str) -> dict[str, str]:
    """The top-level `name = value` lines of a build.ninja."""
    found = {}
    for line in text.splitlines():
        name, sep, value = line.partition(" = ")
        if sep and name.isidentifier():
            found[name] = value.strip()
    return found


def header_command(ninja_text: str) -> list[str] | None:
    """The command that compiles torch/extension.h for the C++ files of the extension this
    build.ninja builds, without the output: its compiler and flags, the extension's name left
    out (nothing in the header reads it), the header last. None where the flags name no torch
    header."""
    found = ninja_variables(ninja_text)
    if "cxx" not in found or "cflags" not in found:
        return None
    flags = [flag for flag in shlex.split(found["cflags"]) + shlex.split(found.get("post_cflags", ""))
             if not NAME_DEFINE.match(flag)]
    folders = [flags[i + 1] for i, flag in enumerate(flags[:-1]) if flag == "-isystem"]
    header = next((Path(f) / HEADER for f in folders if (Path(f) / HEADER).is_file()), None)
    if header is None:
        return None
    return [*shlex.split(found["cxx"]), *flags, "-x", "c++-header", str(header)]


def key(command: list[str]) -> str:
    """The folder name of a command's header: its digest with torch's build (a header changed in
    place by a reinstall of the same folder would not be noticed by gcc)."""
    import torch

    identity = [command, torch.__version__, getattr(torch.version, "git_version", "")]
    return hashlib.sha256(json.dumps(identity).encode()).hexdigest()[:24]


def include_folder(root: Path, command: list[str]) -> Path | None:
    """The folder to put on CPATH for a build compiled with this command, if its header is made
    and the text header lies beside it (without it, a second include of the header fails)."""
    folder = root / key(command)
    return folder if (folder / PRECOMPILED).is_file() and (folder / HEADER).is_file() else None


def literal_options(source: str) -> list[tuple[list[str], bool]]:
    """(extra_cflags, with CUDA) of each load_inline call in a candidate's source whose C++
    flags are literals and are all SAFE_FLAGs, and that adds no include folders of its own."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or _called_name(node.func) != "load_inline":
            continue
        keywords = {kw.arg: kw.value for kw in node.keywords if kw.arg}
        flags = _literal_strings(keywords.get("extra_cflags"))
        includes = _literal_strings(keywords.get("extra_include_paths"))
        if flags is None or includes != [] or not all(SAFE_FLAG.match(f.strip()) for f in flags):
            continue
        cuda = keywords.get("cuda_sources")
        with_cuda = keywords.get("with_cuda")
        if isinstance(with_cuda, ast.Constant) and with_cuda.value is not None:
            uses_cuda = bool(with_cuda.value)
        else:
            uses_cuda = cuda is not None and not (isinstance(cuda, ast.Constant) and not cuda.value)
        found.append(([f.strip() for f in flags], uses_cuda))
    return found


def planned_commands(sources: Iterable[str], min_uses: int = MIN_USES) -> list[list[str]]:
    """The header commands that at least min_uses of the sources' load_inline calls would
    compile with, most used first, as torch's build-file writer makes their flags."""
    plan = HeaderPlan(min_uses)
    for source in sources:
        plan.add(source)
    return plan.due()


class HeaderPlan:
    """The header commands a growing set of builds calls for (a batch's builds come one by
    one): each command once, as soon as min_uses of the sources added so far share it."""

    def __init__(self, min_uses: int = MIN_USES):
        self.min_uses = min_uses
        self._uses: Counter[tuple[tuple[str, ...], bool]] = Counter()
        self._given: set[tuple[tuple[str, ...], bool]] = set()

    def add(self, source: str) -> None:
        for options in set((tuple(f), c) for f, c in literal_options(source)):
            self._uses[options] += 1

    def due(self) -> list[list[str]]:
        """The commands that reached min_uses since the last call, most used first."""
        commands = []
        for (flags, with_cuda), count in self._uses.most_common():
            if count < self.min_uses or (flags, with_cuda) in self._given:
                continue
            self._given.add((flags, with_cuda))
            command = torch_command(list(flags), with_cuda)
            if command is not None and command not in commands:
                commands.append(command)
        return commands


def torch_command(extra_cflags: list[str], with_cuda: bool) -> list[str] | None:
    """header_command() of the build.ninja that torch writes for an extension with these
    flags; None where this torch cannot write one (no CUDA toolkit for a CUDA extension, a
    writer of another shape)."""
    import torch.utils.cpp_extension as cpp_extension

    sources = ["main.cpp", "cuda.cu"] if with_cuda else ["main.cpp"]
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "build.ninja")
        try:
            write = cpp_extension._write_ninja_file_to_build_library
            # What load_inline passes it; torch versions differ in which they take.
            known = {"path": path, "name": "kb_header", "sources": sources,
                     "extra_cflags": extra_cflags, "extra_cuda_cflags": [],
                     "extra_sycl_cflags": [], "extra_ldflags": [], "extra_include_paths": [],
                     "with_cuda": with_cuda, "with_sycl": False, "is_python_module": True,
                     "is_standalone": False}
            parameters = inspect.signature(write).parameters
            if any(name not in known and parameter.default is parameter.empty
                   for name, parameter in parameters.items()):
                return None  # a writer that needs what this cannot tell it
            write(**{name: value for name, value in known.items() if name in parameters})
        except Exception:  # noqa: BLE001 - a private writer; any failure only means no header
            return None
        return header_command(Path(path).read_text())


def start(root: Path, command: list[str],
          niceness: int = 0) -> tuple[subprocess.Popen, Path, object] | None:
    """Start compiling the header for command into a temporary file under root, holding the
    header's lock, at this niceness: (the compiler, the temporary file, the lock). None where
    the header is made, failed before, or another process is making it."""
    folder = root / key(command)
    folder.mkdir(parents=True, exist_ok=True)
    if (folder / PRECOMPILED).is_file() or (folder / FAILED).exists():
        return None
    lock = open(folder / ".kb-lock", "a+")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.close()
        return None
    if (folder / PRECOMPILED).is_file():
        lock.close()
        return None
    partial = folder / f"{PRECOMPILED.name}.{os.getpid()}.partial"
    with open(folder / "pch.log", "wb") as log:
        process = subprocess.Popen([*command, "-o", str(partial)], stdin=subprocess.DEVNULL,
                                   stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    with contextlib.suppress(OSError):
        os.setpriority(os.PRIO_PROCESS, process.pid, niceness)
    return process, partial, lock


def finish(partial: Path, returncode: int, lock, header: Path) -> bool:
    """Put a compiled header in place (whole, at once: a build may look for it any time), or
    mark its command as failed (not when killed: a later run makes it); release the lock.
    header: the text header it was compiled from. Whether the header is in place."""
    folder = partial.parent
    made = returncode == 0 and partial.is_file()
    if made:
        (folder / PRECOMPILED.parent).mkdir(exist_ok=True)
        # The text header beside it, for a second `#include <torch/extension.h>` (candidates
        # often repeat the one load_inline puts first): gcc looks for it where it found the
        # precompiled one, and skips it there as the same file, once only.
        text = folder / HEADER
        text.unlink(missing_ok=True)
        text.symlink_to(header)
        os.replace(partial, folder / PRECOMPILED)
    else:
        partial.unlink(missing_ok=True)
        if returncode > 0:
            (folder / FAILED).write_text(f"exit status {returncode}")
    lock.close()
    return made


# Told of each header compile that ended by itself: (its folder, seconds, whether it was made).
OnEnd = Callable[[Path, float, bool], None]


class Headers:
    """The precompiled headers a pool of builds has made for it, compiled beside its builds."""

    def __init__(self, root: Path, commands: list[list[str]], niceness: int = 0,
                 on_end: OnEnd = lambda *_: None):
        self._running: list[tuple[subprocess.Popen, Path, object, Path, float]] = []
        self._root, self._niceness, self._on_end = root, niceness, on_end
        self.start(commands)

    def start(self, commands: list[list[str]]) -> None:
        """Compile the headers of these commands that no process made or compiles now."""
        for command in commands:
            started = start(self._root, command, self._niceness)
            if started is not None:
                self._running.append((*started, Path(command[-1]), time.perf_counter()))

    def processes(self) -> list[subprocess.Popen]:
        return [process for process, *_ in self._running]

    def poll(self, stop: bool = False) -> int:
        """Put the headers compiled by now in place (with stop, kill the others first); how
        many are still compiling."""
        still = []
        for process, partial, lock, header, began in self._running:
            if stop and process.poll() is None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(process.pid, 9)
                process.wait()
            if process.poll() is None:
                still.append((process, partial, lock, header, began))
                continue
            made = finish(partial, process.returncode, lock, header)
            if process.returncode >= 0:  # not killed
                self._on_end(partial.parent, time.perf_counter() - began, made)
        self._running = still
        return len(still)

    def wait(self, timeout_s: float | None = None) -> None:
        """Block until every header is in place; past timeout_s, kill the ones left."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while self.poll(stop=deadline is not None and time.monotonic() > deadline):
            time.sleep(WAIT_POLL_S)


@contextlib.contextmanager
def on_cpath(folder: Path | None) -> Iterator[None]:
    """gcc searches folder (put first on CPATH) for headers while the block runs."""
    if folder is None:
        yield
        return
    before = os.environ.get("CPATH")
    os.environ["CPATH"] = os.pathsep.join(p for p in (str(folder), before) if p)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("CPATH", None)
        else:
            os.environ["CPATH"] = before


def for_build(build_directory: str) -> Path | None:
    """In a build process: the folder of the precompiled header for the extension whose
    build.ninja lies in build_directory, if the harness made one (ROOT_ENV names the root)."""
    root = os.environ.get(ROOT_ENV)
    ninja = Path(build_directory) / "build.ninja"
    if not root or not ninja.is_file():
        return None
    try:  # a build must never fail for want of a header: without one it parses the text
        command = header_command(ninja.read_text(errors="replace"))
        return include_folder(Path(root), command) if command else None
    except Exception:  # noqa: BLE001
        return None


def use_for_builds() -> None:
    """Let each extension build of this process (a build process, or a worker whose candidate
    builds at its item) find the precompiled torch header the harness made for its compile
    command, if any (wraps torch's ninja runner, ninja.py)."""
    def wrap(run: ninja.Runner) -> ninja.Runner:
        def with_headers(build_directory, *args, **kwargs):
            with on_cpath(for_build(build_directory)):
                return run(build_directory, *args, **kwargs)
        return with_headers

    ninja.wrap_runner("headers", wrap)


def _called_name(func: ast.expr) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _literal_strings(node: ast.expr | None) -> list[str] | None:
    """A keyword's value as a list of strings: [] when absent or None, None when it is not a
    literal list or tuple of strings (a bare string is read as its characters)."""
    if node is None or (isinstance(node, ast.Constant) and node.value is None):
        return []
    if isinstance(node, (ast.List, ast.Tuple)) and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
        return [e.value for e in node.elts]  # type: ignore[attr-defined]
    return None
