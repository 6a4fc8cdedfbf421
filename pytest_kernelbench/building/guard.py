"""A guard over a build pool's process groups, in a process of its own: where the pool's
process ends without ending its builds (killed outright), the guard kills them. A build that a
timing stopped (SIGSTOP) would otherwise stay stopped for good, holding its memory, and one
left running would race the next run's build of the same folder, whose lock died with the
pool's process.

The pool tells the guard, on its stdin, each group it runs ('+PGID') and each it reaped
('-PGID'), a line each. At the end of the input (the pool closing it, or its process gone, as
the kernel closes a dead process's pipes) the guard kills every group still named. It runs as
a plain script (`python -I guard.py`): it needs nothing of the package, whose import would cost
seconds.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterable


class Guard:
    """The pool's side: track() the groups running now; close() once none is left."""

    def __init__(self) -> None:
        self._process = subprocess.Popen(
            [sys.executable, "-I", __file__], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True)  # apart from what it guards
        self._named: set[int] = set()
        self._lock = threading.Lock()

    def track(self, pgids: Iterable[int]) -> None:
        """Name the groups running now: those new to the guard are added, those gone dropped."""
        now = set(pgids)
        with self._lock:
            lines = [f"+{pgid}\n" for pgid in sorted(now - self._named)]
            lines += [f"-{pgid}\n" for pgid in sorted(self._named - now)]
            self._named = now
            if lines and self._process.stdin is not None:
                with contextlib.suppress(OSError):  # a guard that died guards nothing more
                    self._process.stdin.write("".join(lines).encode())
                    self._process.stdin.flush()

    def close(self) -> None:
        """End the guard: it kills what is still named (nothing, after a pool that ended its
        builds)."""
        with self._lock:
            if self._process.stdin is not None:
                with contextlib.suppress(OSError):
                    self._process.stdin.close()
        self._process.wait()


def watch(lines: Iterable[str]) -> set[int]:
    """The groups named at the end of the input."""
    named: set[int] = set()
    for line in lines:
        line = line.strip()
        if line[:1] in ("+", "-") and line[1:].isdigit():
            (named.add if line[0] == "+" else named.discard)(int(line[1:]))
    return named


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C is the pool's to handle
    for pgid in watch(sys.stdin):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)


if __name__ == "__main__":
    main()
