"""Cores of their own for the builds (--kb-build-cores=split): the host's cores split once, a
few reserved for each GPU's timing and the rest shared by the builds and by all judging that is
not timing, so that builds go on while a timing runs instead of stopping for it.

A timing needs two threads on the host: the judging process's, which waits on its worker and
times the harness's own bursts, and the worker's, which launches the timed calls. While it
times, those two threads move onto their GPU's reserved cores and nothing else runs there
(everything else was put on the shared cores when it started, and what it starts inherits
that). The split is made from the cores the process may use before any of it is pinned, so
every process of a run (each started by one that was never pinned) makes the same one.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass

from pytest_kernelbench.gpu import devices

RESERVED_PER_GPU = 2  # the judging process's thread and its worker's
MIN_SHARED = 2  # cores left for builds and the other judging, at the least


class NoSplit(ValueError):
    """--kb-build-cores=split cannot be had here; the message says why."""


@dataclass(frozen=True)
class CoreSplit:
    """Which cores each GPU's timing has (by CUDA index) and which everything else shares."""

    reserved: tuple[frozenset[int], ...]
    shared: frozenset[int]

    def for_timing(self, index: int) -> frozenset[int]:
        return self.reserved[index % len(self.reserved)]


def split_cores(cores: list[int] | set[int] | frozenset[int], gpus: int) -> CoreSplit:
    """The split of these cores for `gpus` GPUs: the highest RESERVED_PER_GPU for each GPU's
    timing (core 0 takes most of the host's interrupts), the rest shared."""
    ordered = sorted(cores)
    reserved_count = RESERVED_PER_GPU * max(gpus, 1)
    if len(ordered) - reserved_count < MIN_SHARED:
        raise NoSplit(f"--kb-build-cores=split: {len(ordered)} cores cannot reserve "
                      f"{RESERVED_PER_GPU} for each of {max(gpus, 1)} GPU(s) and leave "
                      f"{MIN_SHARED} for the builds")
    shared, top = ordered[:-reserved_count], ordered[-reserved_count:]
    reserved = tuple(frozenset(top[i:i + RESERVED_PER_GPU])
                     for i in range(0, reserved_count, RESERVED_PER_GPU))
    return CoreSplit(reserved, frozenset(shared))


@functools.cache
def host_split(gpus: int) -> CoreSplit:
    """This process's split, made once, from the cores it could use before any pinning."""
    return split_cores(os.sched_getaffinity(0), gpus)


def split_for(build_cores: str, device: str) -> CoreSplit | None:
    """The run's split under --kb-build-cores, None where builds pause for timings instead.
    Raises NoSplit where a split is asked for and cannot be had."""
    if build_cores != "split":
        return None
    if not device.startswith("cuda"):
        raise NoSplit(f"--kb-build-cores=split: the device is {device}, and a timing on the "
                      "CPU needs every core the builds would take")
    return host_split(devices.visible_gpus())


def thread_cores() -> frozenset[int]:
    """The cores the calling thread may run on now."""
    return frozenset(os.sched_getaffinity(0))


def pin_thread(cores: frozenset[int]) -> None:
    """The calling thread onto these cores; the threads and processes it starts inherit them."""
    os.sched_setaffinity(0, cores)


def pin_process_thread(pid: int, cores: frozenset[int]) -> None:
    """Another process's main thread onto these cores; nothing where it has ended."""
    try:
        os.sched_setaffinity(pid, cores)
    except (ProcessLookupError, PermissionError):
        pass
