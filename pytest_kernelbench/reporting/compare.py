"""What moved between two runs of the same cases, and whether it moved beyond the timing's
noise. Pure: records and report heads in, moves and lines out.

Two runs of identical code do not read the same speedups: each speedup is known to its 95%
interval (or, without one, to its margin), and runs differ by more than one run's interval
says (timing.RESOLUTION). A speed move counts only when the two intervals are apart and the
speedup moved by more than that; a status that flips between `passed`, `slower` and
`inconclusive` without one is noise. A change of correctness is never noise.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_kernelbench import faults
from pytest_kernelbench.gpu import timing
from pytest_kernelbench.record import CaseKey, Record
from pytest_kernelbench.reporting import history, report, resume

# The kinds of move, in the order they are counted and listed.
NOW_FAILS = "now fails"
NOW_PASSES = "now passes"
FASTER = "faster beyond noise"
SLOWER = "slower beyond noise"
RESTATUS = "other status change"  # wrong in both, or a speed verdict such as torch_only
NOISE = "within noise"
UNCHANGED = "unchanged"
KINDS = (NOW_FAILS, NOW_PASSES, FASTER, SLOWER, RESTATUS, NOISE, UNCHANGED)
LISTED = (NOW_FAILS, NOW_PASSES, FASTER, SLOWER, RESTATUS)  # NOISE too on request (--all)
_COUNTED = {FASTER: "faster", SLOWER: "slower"}  # under "beyond noise:" in the header
# A correct case's speed verdicts: a move among them is noise unless the speedup moved beyond it.
SPEED_VERDICTS = frozenset({faults.PASSED, faults.SLOWER, faults.INCONCLUSIVE})


@dataclass(frozen=True)
class Side:
    """One of the two runs: how it is named, its report without its records, and its records."""

    label: str  # "run 3", or the file's name
    path: Path | None
    head: report.Report
    records: list[Record]

    @classmethod
    def of(cls, path: Path | None, head: report.Report, records: list[Record],
           label: str | None = None) -> Side:
        """A side named by its history number where the file is a kept run, else by its name."""
        kept = history.entry_of(path) if path is not None else None
        if label is None:
            label = f"run {kept.number}" if kept is not None else \
                path.name if path is not None else "this run"
        return cls(label, path, head, records)

    def details(self) -> str:
        """Where and when the run was made, as far as its report says."""
        env = self.head.get("environment") or {}
        config = self.head.get("config") or {}
        kept = history.entry_of(self.path) if self.path is not None else None
        where = history.shown(self.path) if self.path is not None else self.label
        parts = [where] if where != self.label else []
        if env.get("date"):  # 2025-01-07T10:15:00Z, as history names show it
            parts.append(str(env["date"]).replace("T", " ").replace("Z", " UTC"))
        elif kept is not None:
            parts.append(kept.when)
        if env.get("commit"):
            parts.append(f"commit {env['commit']}")
        device = " ".join(str(v) for v in (config.get("device"), env.get("gpu")) if v)
        if device:
            parts.append(device)
        if self.head.get("complete") is False:
            parts.append(f"partial: {self.head.get('cases_not_run')} case(s) not run")
        return "; ".join(parts)


@dataclass(frozen=True)
class Move:
    key: CaseKey
    kind: str
    was: Record
    now: Record


def resolution(heads: Sequence[report.Report]) -> float:
    """How far the speedup of identical code reads between runs on the runs' devices (the
    widest of them; a run that does not say, such as a stream, as the widest there is)."""
    kinds = {str((head.get("config") or {}).get("device") or "").partition(":")[0]
             for head in heads}
    return max(timing.RESOLUTION.get(kind, max(timing.RESOLUTION.values())) for kind in kinds)


def band(record: Record) -> tuple[float, float] | None:
    """The speedups a record's timing cannot tell from its reading: its 95% interval, or
    without a bounded one the reading widened by its margin (timing.margin, as fast.py reads
    a speedup without an interval); None without a speedup."""
    speedup = record.get("speedup")
    if speedup is None:
        return None
    interval = record.get("speedup_interval")
    if interval is not None and interval[1] is not None and math.isfinite(interval[1]):
        return float(interval[0] or 0.0), float(interval[1])
    margin = record.get("speedup_margin")
    widen = 1 + (margin if margin else timing.margin(interval, _device(record)))
    return speedup / widen, speedup * widen


def _ratio(was: Record, now: Record) -> float | None:
    before, after = was.get("speedup"), now.get("speedup")
    return after / before if before and after else None


def speed_move(was: Record, now: Record, threshold: float) -> str | None:
    """FASTER or SLOWER where the speedup moved beyond noise: the two bands apart, and the
    speedup moved by more than threshold (relative); None otherwise."""
    ratio, old, new = _ratio(was, now), band(was), band(now)
    if ratio is None or old is None or new is None:
        return None
    if new[0] > old[1] and ratio - 1 > threshold:
        return FASTER
    if new[1] < old[0] and 1 - ratio > threshold:
        return SLOWER
    return None


def kind_of(was: Record, now: Record, threshold: float) -> str:
    """What kind of move one case made between two runs (KINDS)."""
    if bool(was.get("correct")) != bool(now.get("correct")):
        return NOW_PASSES if now.get("correct") else NOW_FAILS
    restatus = was.get("status") != now.get("status")
    if not now.get("correct"):
        return RESTATUS if restatus else UNCHANGED
    if restatus and not {was.get("status"), now.get("status")} <= SPEED_VERDICTS:
        return RESTATUS
    moved = speed_move(was, now, threshold)
    if moved is not None:
        return moved
    ratio = _ratio(was, now)
    return NOISE if restatus or (ratio is not None and abs(ratio - 1) > threshold) else UNCHANGED


@dataclass(frozen=True)
class Comparison:
    before: Side
    after: Side
    threshold: float
    moves: list[Move]  # every case the two runs share, in case order
    only_before: int
    only_after: int

    def count(self, kind: str) -> int:
        return sum(move.kind == kind for move in self.moves)

    @property
    def regressed(self) -> bool:
        """Whether a case that was correct no longer is."""
        return self.count(NOW_FAILS) > 0

    def listed(self, noise: bool = False) -> list[Move]:
        """The moves worth a line: every one beyond noise, and with noise those within it."""
        kinds = (*LISTED, NOISE) if noise else LISTED
        return sorted((move for move in self.moves if move.kind in kinds),
                      key=lambda move: (kinds.index(move.kind), move.key))

    def header(self) -> list[str]:
        """Which two runs, how many cases they share, what counts as noise, and how many of
        each kind of move there were."""
        width = max(len(self.before.label), len(self.after.label))
        only = [f"{n} only in {side.label}" for n, side in
                ((self.only_before, self.before), (self.only_after, self.after)) if n]
        return [
            f"before: {self.before.label:<{width}}  {self.before.details()}".rstrip(),
            f"after:  {self.after.label:<{width}}  {self.after.details()}".rstrip(),
            f"{len(self.moves)} case(s) in both, {self.count(UNCHANGED)} {UNCHANGED}"
            + (f" ({', '.join(only)})" if only else ""),
            "beyond noise: " + ", ".join(f"{_COUNTED.get(kind, kind)} {self.count(kind)}"
                                         for kind in LISTED),
            f"{NOISE} {self.count(NOISE)}: speedup intervals that overlap, or a move of "
            f"{self.threshold:.0%} or less (identical code's spread between runs)",
        ]


def compare(before: Side, after: Side, threshold: float | None = None) -> Comparison:
    """Every case the two runs share, with the kind of its move; threshold: how far a speedup
    must move to count (default: resolution() of the runs' devices)."""
    if threshold is None:
        threshold = resolution([before.head, after.head])
    old = {resume.record_key(r): r for r in before.records}
    new = {resume.record_key(r): r for r in after.records}
    moves = [Move(key, kind_of(old[key], new[key], threshold), old[key], new[key])
             for key in sorted(old.keys() & new.keys())]
    return Comparison(before, after, threshold, moves, len(old.keys() - new.keys()),
                      len(new.keys() - old.keys()))


def name(key: CaseKey) -> str:
    set_name, level, problem_id, sample = key
    return f"{set_name} level{level}/{problem_id} {sample}"


def _device(record: Record) -> str:
    """The kind of device a record was judged on ('cuda' where it does not say: the older
    reports, all of GPU runs, whose margins were the GPU's)."""
    device = str((record.get("placement") or {}).get("device") or "cuda")
    return device if device.split(":")[0] in timing.BURST_SPREAD else "cuda"


def speed_words(record: Record) -> str:
    """'1.500 [1.452, 1.548]': a speedup and the band its timing knows it to; '-' for none."""
    speedup = record.get("speedup")
    if speedup is None:
        return "-"
    interval = record.get("speedup_interval")
    if interval is None:
        spread = timing.burst_spread(_device(record)) - 1
        return f"{speedup:.3f} (±{spread:.0%}, the harness's clock)"
    if interval[1] is None or not math.isfinite(interval[1]):
        return f"{speedup:.3f} (±{timing.NO_INTERVAL_SPREAD:.0%}, too few calls for an interval)"
    return f"{speedup:.3f} [{interval[0]:.3f}, {interval[1]:.3f}]"


def line(move: Move) -> str:
    """One line on one case's move: 'r1 level1/4 s0: slower beyond noise: passed -> slower,
    speedup 1.500 [1.452, 1.548] -> 1.200 [1.161, 1.239] (-20.0%)'."""
    was, now = move.was, move.now
    change = f"{was.get('status')} -> {now.get('status')}"
    if move.kind in (NOW_FAILS, NOW_PASSES):
        error = f": {now['error']}" if now.get("error") else ""
        return f"{name(move.key)}: {move.kind} ({change}{error})"
    if move.kind == RESTATUS:
        return f"{name(move.key)}: {change}" + (f" ({now['error']})" if now.get("error") else "")
    parts = [change] if was.get("status") != now.get("status") else []
    ratio = _ratio(was, now)
    if was.get("speedup") is not None or now.get("speedup") is not None:
        moved = f" ({ratio - 1:+.1%})" if ratio is not None else ""
        parts.append(f"speedup {speed_words(was)} -> {speed_words(now)}{moved}")
    return f"{name(move.key)}: {move.kind}: {', '.join(parts)}"


def lines(comparison: Comparison, noise: bool = False) -> list[str]:
    """The header, then a line per move beyond noise (and within it, with noise)."""
    return comparison.header() + [line(move) for move in comparison.listed(noise)]
