"""Files that every candidate is judged against, checked for changes while candidates run.

Candidate code runs as the same user as the harness, so it can write to the problem files. A
problem is hashed when the run collects it and checked again before each of its stages: a
changed problem would judge every later candidate against something else (a reference that
returns zeros, say), so the run stops with an error naming the file instead.
"""

from __future__ import annotations

import hashlib
from pathlib import Path


class ProblemChanged(Exception):
    """A problem file no longer has the content it had when the run collected it."""


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class ProblemDigests:
    """The digests of the selected problem files at collection time."""

    def __init__(self, paths: list[Path]):
        self.digests = {path: file_digest(path) for path in paths}

    def check(self, path: Path, last_case: str | None) -> None:
        """Raise ProblemChanged when path differs from its collected content."""
        known = self.digests.get(path)
        if known is None:
            return
        try:
            now = file_digest(path)
        except OSError as exc:
            now = f"unreadable ({exc.strerror})"
        if now != known:
            blame = f"; the last case evaluated in this process was {last_case}" \
                if last_case else ""
            raise ProblemChanged(f"{path}: the problem file changed during the run (candidate "
                                 f"code can write to it){blame}. Restore it (e.g. git checkout) "
                                 "and run again; nothing judged against it after the change "
                                 "was kept.")
