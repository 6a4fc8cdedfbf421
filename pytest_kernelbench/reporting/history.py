"""The runs a report has had: every report a run writes is also kept, numbered, in a history
folder beside it, so two runs compare without copying files by hand.

    reports/kernelbench.json                                   the latest run's report
    reports/history/kernelbench/0001_20250107T101500Z.json     each run's, numbered upward
    reports/history/kernelbench/0002_20250107T113000Z.json

The folder is named after the report's stem, so runs with reports of their own
(`--kb-report=reports/fp16.json`) keep histories of their own. A run is named by its number
(`3`), by `latest`, or by a path (`resolve`). Only listing and naming here; the one write is
`keep`.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

FOLDER = "history"
LATEST = "latest"
STAMP = "%Y%m%dT%H%M%SZ"  # UTC, sortable, no characters a file system refuses
_NAME = re.compile(r"^(?P<number>\d{4,})_(?P<stamp>\d{8}T\d{6}Z)\.json$")


class HistoryError(ValueError):
    """A run that a history does not hold; the one-line message names the folder."""


@dataclass(frozen=True)
class Entry:
    """One run in a history."""

    number: int
    path: Path
    written: datetime  # UTC, when the run wrote its report

    @property
    def when(self) -> str:
        return self.written.strftime("%Y-%m-%d %H:%M:%S UTC")


def folder_of(report_path: Path) -> Path:
    """The history of a report: reports/kernelbench.json -> reports/history/kernelbench."""
    return report_path.parent / FOLDER / report_path.stem


def entry_name(number: int, written: datetime) -> str:
    return f"{number:04d}_{written.astimezone(timezone.utc).strftime(STAMP)}.json"


def entry_of(path: Path) -> Entry | None:
    """The entry a file is, by its name; None for a file no run wrote there."""
    found = _NAME.match(path.name)
    if found is None:
        return None
    written = datetime.strptime(found["stamp"], STAMP).replace(tzinfo=timezone.utc)
    return Entry(int(found["number"]), path, written)


def entries(folder: Path) -> list[Entry]:
    """The runs a history holds, oldest first; none where the folder does not exist. Files of
    other names (a note, an editor's backup) are not runs."""
    try:
        names = os.listdir(folder)
    except (FileNotFoundError, NotADirectoryError):
        return []
    found = [entry for name in names if (entry := entry_of(folder / name)) is not None]
    return sorted(found, key=lambda entry: entry.number)


def next_number(held: list[Entry]) -> int:
    """One above the highest held: a run removed by hand from the middle leaves a gap."""
    return max((entry.number for entry in held), default=0) + 1


def keep(report_path: Path, text: str, written: datetime) -> Entry:
    """Keep a copy of the report just written (its text) as the history's next run."""
    folder = folder_of(report_path)
    folder.mkdir(parents=True, exist_ok=True)
    number = next_number(entries(folder))
    while True:
        path = folder / entry_name(number, written)
        try:
            with path.open("x") as handle:  # never over a run kept already
                handle.write(text)
        except FileExistsError:
            number += 1
            continue
        return Entry(number, path, written.astimezone(timezone.utc))


def shown(path: Path) -> str:
    """A path as short as it reads: relative to the current folder where it is inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def numbers_held(held: list[Entry]) -> str:
    """'it holds runs 1-3, 5', 'it holds run 3', 'it holds no runs yet'."""
    spans: list[list[int]] = []
    for entry in held:
        if spans and entry.number == spans[-1][1] + 1:
            spans[-1][1] = entry.number
        else:
            spans.append([entry.number, entry.number])
    words = ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)
    return ("it holds " + ("no runs yet" if not held else
                           f"run {words}" if len(held) == 1 else f"runs {words}"))


def resolve(text: str, folder: Path, base: Path | None = None) -> Path:
    """A run named as a person would: its number in the history (`3`, `0003`), `latest`, or a
    path to a report or stream (a relative one read from base, else the current folder). A name
    made of digits is always a number: a file so named is given as ./3."""
    held = entries(folder)
    if text == LATEST:
        if not held:
            raise HistoryError(f"no runs in {shown(folder)} yet (each run that writes a report "
                               "keeps a copy there)")
        return held[-1].path
    if text.isdigit():
        for entry in held:
            if entry.number == int(text):
                return entry.path
        raise HistoryError(f"no run {int(text)} in {shown(folder)} ({numbers_held(held)})")
    path = (base or Path()) / Path(text).expanduser()
    if not path.is_file():
        raise HistoryError(f"no such file: {text} (nor a run number or {LATEST!r} of "
                           f"{shown(folder)})")
    return path
