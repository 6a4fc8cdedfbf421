"""Progress while the items run: a live line on a terminal, a heartbeat line in a log.

Registered by the plugin in the process that reports (xdist's controller, which learns of every
worker's items through the reports they forward; never a worker) unless `-q -q` asks for
silence. A thread of its own writes, since the main thread is inside an item (or, under xdist,
waiting for the workers) when there is something to say. It writes only outside pytest's own
writes: every hook in which the terminal reporter writes is wrapped, the live line erased
before it and drawn again after it.

pytest captures file descriptor 1 while an item runs, so the lines go to a duplicate of the
terminal's descriptor taken at configuration time (or, where the output has none, as in an
in-process pytester run, to the reporter's file itself).
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from typing import IO, Any

import pytest

from pytest_kernelbench.reporting.heartbeat import (
    REDRAW_S,
    Board,
    Ticker,
    heartbeat_text,
    live_text,
)
from pytest_kernelbench.reporting.progress import item_finished

# Below pytest's current line, then back to where its next character goes: "\n" also scrolls
# a screen whose last line pytest's line is, where a saved cursor position would not follow.
ERASE_BELOW = "\n\x1b[2K"
UP = "\x1b[1A\r"


def back_to(column: int, width: int) -> str:
    """The escape that moves the cursor from column 0 to pytest's column (a line longer than
    the terminal wrapped: its last row)."""
    column = column % width if width > 0 else column
    return f"\x1b[{column}C" if column else ""


class LiveProgress:
    """The live line (a terminal) or the heartbeat (a log) of one run."""

    def __init__(self, config: pytest.Config, heartbeat_s: float,
                 weights: Mapping[str, float] | None = None, stream: IO[str] | None = None,
                 tty: bool | None = None):
        self.config = config
        self.board = Board(weights=weights)
        self.heartbeat_s = heartbeat_s
        self.stream, self._owned = (stream, False) if stream is not None else terminal_stream()
        self.tty = bool(tty if tty is not None else
                        self.stream.isatty() and os.environ.get("TERM") != "dumb")
        self._lock = threading.Lock()
        self._paused = 0  # pytest is writing (hooks nest)
        self._drawn = False  # the live line is on the screen
        self._last_beat = time.monotonic()
        self._pytest_wrote = True  # since the last heartbeat: pytest's line may be open
        self._ticker: Ticker | None = None
        self._expected = False  # the items are known (xdist: from the first worker)

    # --- when the run starts and ends ------------------------------------------------------

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if not hasattr(self.config, "workerinput"):
            self._expect([item.nodeid for item in session.items])

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        self._expect(ids)  # every worker collects the same ids

    def _expect(self, nodeids: list[str]) -> None:
        # xdist's controller collects no items of its own: its workers' ids count
        if nodeids and not self._expected:
            self._expected = True
            self.board.expect(nodeids)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session):
        tick_s = REDRAW_S if self.tty else min(REDRAW_S, self.heartbeat_s / 4)
        self._last_beat = time.monotonic()
        self._ticker = Ticker(self.tick, tick_s, name="kernelbench progress").start()
        try:
            return (yield)
        finally:
            self.stop()

    def stop(self) -> None:
        if self._ticker is not None:
            self._ticker.stop()
            self._ticker = None
        with self._lock:
            self._paused += 1  # for good: nothing is drawn after the loop
            self._erase()

    def pytest_unconfigure(self) -> None:
        self.stop()
        if self._owned:
            self.stream.close()

    # --- pytest writes in these: erase before, draw after ---------------------------------

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_logstart(self, nodeid: str):
        with self._aside():
            try:
                return (yield)
            finally:
                self.board.started(nodeid)

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport):
        with self._aside():
            try:
                return (yield)
            finally:
                if item_finished(report.when, report.passed):
                    self.board.finished(report.nodeid)

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_logfinish(self):
        with self._aside():
            return (yield)

    @pytest.hookimpl(wrapper=True, tryfirst=True, optionalhook=True)
    def pytest_testnodedown(self):
        with self._aside():
            return (yield)

    @pytest.hookimpl(wrapper=True, tryfirst=True, optionalhook=True)
    def pytest_testnodeready(self):
        with self._aside():
            return (yield)

    @contextlib.contextmanager
    def _aside(self) -> Iterator[None]:
        """The live line erased while pytest writes, and drawn again after."""
        self.pause()
        try:
            yield
        finally:
            self.resume()

    def pause(self) -> None:
        with self._lock:
            self._paused += 1
            self._erase()

    def resume(self) -> None:
        with self._lock:
            self._paused -= 1
            self._pytest_wrote = True
        self.config.get_terminal_writer().flush()  # what pytest wrote, before what we write
        if self.tty:
            self.tick()

    # --- what the thread says --------------------------------------------------------------

    def tick(self) -> None:
        with self._lock:
            if self._paused:
                return
            snapshot = self.board.snapshot()
            if not snapshot.running:
                self._erase()
            elif self.tty:
                self._draw(live_text(snapshot, self._width() - 1))
            elif time.monotonic() - self._last_beat >= self.heartbeat_s:
                self._last_beat = time.monotonic()
                self._beat(heartbeat_text(snapshot))

    def _draw(self, text: str) -> None:
        back = back_to(self._column(), self._width())
        self._write(f"{ERASE_BELOW}{text}{UP}{back}")
        self._drawn = True

    def _erase(self) -> None:
        if self._drawn:
            self._write(f"{ERASE_BELOW}{UP}{back_to(self._column(), self._width())}")
            self._drawn = False

    def _beat(self, text: str) -> None:
        # On a line of its own; pytest's dots then go on under it.
        opened = self._pytest_wrote and self._column() > 0
        self._write(("\n" if opened else "") + text + "\n")
        self._pytest_wrote = False

    def _column(self) -> int:
        return self.config.get_terminal_writer().width_of_current_line

    def _width(self) -> int:
        return self.config.get_terminal_writer().fullwidth

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # the terminal went away: nothing more to say there
            pass


def register(config: pytest.Config, heartbeat_s: float,
             weights: Mapping[str, float] | None = None) -> LiveProgress | None:
    """Start saying what runs, in the process that reports and unless -q -q asks for silence."""
    if hasattr(config, "workerinput") or config.get_verbosity() < -1 \
            or config.pluginmanager.get_plugin("terminalreporter") is None:
        return None
    progress = LiveProgress(config, heartbeat_s, weights)
    config.pluginmanager.register(progress, "kernelbench-live")
    return progress


def terminal_stream() -> tuple[IO[str], bool]:
    """(where the lines go, whether it is ours to close): a duplicate of standard output's
    descriptor, which pytest's capture of descriptor 1 during an item does not reach."""
    try:
        descriptor = sys.stdout.fileno()
    except (AttributeError, OSError, io.UnsupportedOperation):
        return sys.stdout, False
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    return open(os.dup(descriptor), "w", encoding=encoding, errors="replace", closefd=True), True
