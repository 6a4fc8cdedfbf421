"""A device's memory, given back by every process of the run to a case that ran out of it.

The processes of a run share each device's memory: other xdist workers' pytest processes (their
reference side) and their sandbox workers (a loaded candidate, its buffers and cached blocks)
keep what they hold between stages. A case that runs out of memory beside them is judged again
only once they gave it back, so that `out_of_memory` means the case does not fit the card.

The protocol works through files beside the device's lock, like the timing gate:
- every judging process of a device is a **member** (a file in `<lock>.members/`, locked by its
  owner, so a dead member's file is known stale);
- the case's process posts a **claim** (a file in `<lock>.claims/`, locked likewise), gives its
  own memory back, and waits until every other member acknowledged it (or CLAIM_WAIT_S passed);
- a member sees the claim before it next asks for the device (`serve_claims`), or, while it
  runs no stage (an xdist worker with no item left), from a thread of its own; it gives back
  what it can have again unchanged (its reference outputs, cached blocks it keeps; its
  worker's went back when its last stage ended), writes its acknowledgement and, before its
  next stage, waits, holding no lock, until no claim stands;
- a claim that says **workers** (the last run of a case before an `out_of_memory` verdict)
  also has every member stop its paused worker: what a loaded candidate allocated (its model,
  tensors it keeps) is given back only by ending the process, and its next stage starts it
  afresh;
- the claimer takes the device alone, reads the free memory it starts with, runs the stage and
  withdraws its claim.
A member in the middle of a stage answers once that stage ends; several claims at once are
served in the order their owners take the device.

A stage need not run out of memory first to claim it: each stage of a problem leaves the most
its reference side held (`note_footprint`, in `<lock>.footprints/`), and a later stage of the
same problem whose need (twice that: the candidate's side holds about as much) exceeds the
device's free memory when it takes the device claims the memory instead of running beside the
others (`fits_beside`; judge/evaluation.py).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from pytest_kernelbench.gpu.devices import QUIET_POLL_S, lock_path

# How long a claimer waits for the other members. One in a long stage of its own (its worker
# compiling while the stage stepped aside) answers only when that ends, and every member that
# answered waits off the device meanwhile: past this the claim goes on without it, counted.
CLAIM_WAIT_S = 20.0
IDLE_POLL_S = 0.5  # how often a member that runs no stage looks for claims
WORKERS = "workers"  # the text of a claim that has the members stop their workers too
# What a member runs for a claim: gives back what it holds; with True, stops its worker too.
GiveBack = Callable[[bool], None]
_SERIAL = iter(range(sys.maxsize))  # tells apart the files one process owns


@dataclass(frozen=True)
class Room:
    """What a claim got: how many other members gave their memory back, how many did not answer
    in time, and the device's free and total bytes when the claimer took it alone."""

    gave_back: int
    silent: int
    free_bytes: int | None = None
    total_bytes: int | None = None
    workers_stopped: bool = False  # the claim had the others stop their workers too

    def as_dict(self) -> dict[str, int | bool | None]:
        return {"others_gave_back": self.gave_back, "others_silent": self.silent,
                "free_at_start_bytes": self.free_bytes, "total_bytes": self.total_bytes,
                "others_workers_stopped": self.workers_stopped}


def _folder(device: str, kind: str) -> Path:
    folder = lock_path(device).with_suffix(f".{kind}")
    folder.mkdir(exist_ok=True)
    return folder


class _OwnedFile:
    """A file locked by its owner for as long as it lives; a reader that can lock it knows the
    owner is gone."""

    def __init__(self, folder: Path, name: str, text: str = ""):
        self.path = folder / name
        # Locked (and written) before it shows under its name: a reader that found it unlocked
        # in between would take it for a dead owner's and remove it.
        staging = folder / f".{name}.staging"
        self._handle = open(staging, "w+")
        fcntl.flock(self._handle, fcntl.LOCK_EX)
        self._handle.write(text)
        self._handle.flush()
        os.replace(staging, self.path)

    def close(self) -> None:
        self.path.unlink(missing_ok=True)
        self._handle.close()


def _alive(path: Path) -> bool:
    """Whether the owner of an owned file still holds it; a stale one is removed."""
    try:
        with open(path) as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            path.unlink(missing_ok=True)
            return False
    except OSError:
        return False


class Membership:
    """This process's place among the judging processes of a device. While `between_stages`
    is free (its holder takes it for each stage), a thread serves claims with give_back."""

    def __init__(self, device: str, give_back: GiveBack | None = None,
                 between_stages: threading.RLock | None = None):
        self.device = device
        # one file per membership: two in one process (two API sessions) must not wait on each
        # other's lock
        self.name = f"{os.getpid()}-{next(_SERIAL)}"
        self._file = _OwnedFile(_folder(device, "members"), self.name)
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None
        if give_back is not None and between_stages is not None:
            self._thread = threading.Thread(target=self._serve_while_idle,
                                            args=(give_back, between_stages),
                                            name="kb-memory-claims", daemon=True)
            self._thread.start()

    def _serve_while_idle(self, give_back: GiveBack,
                          between_stages: threading.RLock) -> None:
        while not self._stopped.wait(IDLE_POLL_S):
            if _fresh_claims(self.device) and between_stages.acquire(blocking=False):
                try:
                    serve_claims(self.device, give_back, wait=False)
                finally:
                    between_stages.release()

    def close(self) -> None:
        self._stopped.set()
        if self._thread is not None:
            self._thread.join()
        self._file.close()


def members(device: str) -> set[str]:
    """The processes (their pids) with a live membership of a device."""
    folder = _folder(device, "members")
    return {_owner(p.name) for p in folder.iterdir()
            if not p.name.startswith(".") and _alive(p)}


def claims(device: str) -> list[str]:
    """The live claims on a device (their file names, each '<owner pid>-<serial>')."""
    folder = _folder(device, "claims")
    return sorted(p.name for p in folder.iterdir() if "." not in p.name and _alive(p))


def acknowledged(device: str, claim: str) -> set[str]:
    """The members that gave their memory back for a claim."""
    folder = _folder(device, "claims")
    return {p.name.rpartition(".")[2] for p in folder.glob(f"{claim}.ack.*")}


def _acknowledge(device: str, claim: str, member: str) -> None:
    (_folder(device, "claims") / f"{claim}.ack.{member}").touch()


def _owner(name: str) -> str:
    """The pid that owns a claim or membership file ('<pid>-<serial>')."""
    return name.partition("-")[0]


def asks_for_workers(device: str, claim: str) -> bool:
    """Whether a claim has the members stop their workers too."""
    try:
        return (_folder(device, "claims") / claim).read_text() == WORKERS
    except OSError:
        return False


@contextlib.contextmanager
def claim_memory(device: str, give_back: GiveBack, wait_s: float = CLAIM_WAIT_S,
                 workers: bool = False) -> Iterator[Callable[[], Room]]:
    """Claim the device's memory for the block: give this process's memory back, wait until
    every other member did the same (or wait_s passed), and yield a function that, called once
    the device is held alone, says what the claim got. The claim stands until the block ends.
    With workers, every member (this one too) stops its worker as well."""
    me = str(os.getpid())
    name = f"{me}-{next(_SERIAL)}"
    # A killed namesake's acknowledgements go before the claim shows: after, they could be a
    # member's answer to this one.
    for stale in _folder(device, "claims").glob(f"{name}.ack.*"):
        stale.unlink(missing_ok=True)
    claim = _OwnedFile(_folder(device, "claims"), name, WORKERS if workers else "")
    try:
        give_back(workers)
        deadline = time.monotonic() + wait_s
        while True:
            serve_claims(device, give_back, wait=False)  # another claimer's, at the same time
            # A member that acknowledged and then ended (its own claim done) gave back all it had.
            others = members(device) - {me}
            answered = acknowledged(device, name) - {me}
            if answered >= others or time.monotonic() > deadline:
                break
            time.sleep(QUIET_POLL_S)

        def room() -> Room:
            free, total = free_and_total(device)
            return Room(len(answered), len(others - answered), free, total, workers)

        yield room
    finally:
        for ack in _folder(device, "claims").glob(f"{name}.ack.*"):
            ack.unlink(missing_ok=True)
        claim.close()


_SERVED: set[str] = set()  # the claims this process gave its memory back for


def serve_claims(device: str, give_back: GiveBack, wait: bool = True) -> None:
    """Before this process asks for the device: give its memory back once for each other
    process's claim (its worker too where one asks for workers) and acknowledge it; with wait,
    stay off the device until no claim stands (a claimer serving another's claim does not
    wait: each would wait for the other)."""
    me = str(os.getpid())
    while True:
        standing = [c for c in claims(device) if _owner(c) != me]
        fresh = _fresh_claims(device, standing)
        if fresh:
            give_back(any(asks_for_workers(device, claim) for claim in fresh))
            for claim in fresh:
                _acknowledge(device, claim, me)
                _SERVED.add(claim)
        if not standing or not wait:
            return
        time.sleep(QUIET_POLL_S)


def _fresh_claims(device: str, standing: list[str] | None = None) -> list[str]:
    """Other processes' claims this process has not served yet."""
    me = str(os.getpid())
    if standing is None:
        standing = [c for c in claims(device) if _owner(c) != me]
    return [c for c in standing if c not in _SERVED]


# --- admission: a stage that would not fit beside what runs claims the memory first ---------

# What a stage needs, from what its problem's reference side held: the candidate's worker holds
# about as much again (its own model and input sets), as the audit's `fits` estimate counts.
CANDIDATE_AS_REFERENCE = 2


def note_footprint(device: str, key: str, reference_bytes: int) -> None:
    """Remember, for every process of the run on the device, the most memory a problem's
    reference side held in a stage (key: the problem's text digest and the stage)."""
    if reference_bytes <= (footprint(device, key) or 0):
        return
    path = _folder(device, "footprints") / key
    staging = path.with_name(f".{key}.{os.getpid()}-{next(_SERIAL)}")
    staging.write_text(str(reference_bytes))
    os.replace(staging, path)  # a reader sees a whole figure or none


def footprint(device: str, key: str) -> int | None:
    """The most memory the problem's reference side held in the stage so far; None before it
    ran on the device in this run."""
    try:
        return int((_folder(device, "footprints") / key).read_text())
    except (OSError, ValueError):
        return None


def fits_beside(reference_bytes: int | None, free_bytes: int | None) -> bool:
    """Whether a stage whose reference side is known to hold reference_bytes fits the free
    memory the device has beside what runs (unknown figures: it is tried)."""
    if reference_bytes is None or free_bytes is None:
        return True
    return CANDIDATE_AS_REFERENCE * reference_bytes <= free_bytes


def free_and_total(device: str) -> tuple[int | None, int | None]:
    """The device's free and total bytes: the driver's figures on CUDA; the host's available
    and total memory elsewhere (None where they cannot be read)."""
    if device.startswith("cuda"):
        import torch

        free, total = torch.cuda.mem_get_info(device)
        return int(free), int(total)
    return host_memory(Path("/proc/meminfo"))


def host_memory(meminfo: Path) -> tuple[int | None, int | None]:
    """MemAvailable and MemTotal of a /proc/meminfo, in bytes."""
    try:
        text = meminfo.read_text()
    except OSError:
        return None, None
    fields = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        parts = rest.split()
        if parts and parts[0].isdigit():
            fields[key] = int(parts[0]) * 1024
    return fields.get("MemAvailable"), fields.get("MemTotal")
