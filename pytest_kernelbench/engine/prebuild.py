"""The build pool of a run or a session: its size, what it may read, where its shared headers
go, and the lines it says as it works. The pytest run plans its builds at collection and the
API as attempts arrive (open_ended); both build in the same pool, sized by the same rules."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pytest_kernelbench.building import builds, cores, pch
from pytest_kernelbench.building.pool import BuildPool
from pytest_kernelbench.settings import Settings
from pytest_kernelbench.suite.discovery import Case

OnLine = Callable[[str], None]


def builds_ahead(case: Case, settings: Settings, device: str) -> bool:
    """Whether an attempt's extension is built before a judge takes it, by the session's pool
    or, on a cluster, by a node's build actor: its candidate builds one on this device, and
    builds run ahead at all (`build_jobs` 0 builds each in its compile stage)."""
    if case.candidate is None or not builds.candidates_to_build([case], device):
        return False
    if builds.build_jobs(settings.build_jobs, 1) == 0:
        return False
    return builds.needs_build(case.candidate.path.read_text(errors="replace"))


def start_pool(settings: Settings, device: str, arch: str, planned: list[builds.Build],
               processes: int, open_ended: bool = False, say: OnLine | None = None,
               on_over: Callable[[builds.Build], None] = lambda build: None) -> BuildPool:
    """A started pool for the planned builds: each of `processes` processes (xdist workers)
    runs its share of one pool sized to the host's cores (with --kb-build-cores=split, the
    cores the timings leave). say: where its progress lines go; on_over hears of each build
    this process ended (or found another worker's), and of none it never ran."""
    split, shared, jobs = _sizes(settings, device, processes)
    cache_root = settings.build_cache_root
    protected = (*settings.candidate_dirs, cache_root)

    def on_done(build: builds.Build, done: int, total: int, elapsed_s: float) -> None:
        on_over(build)
        if say is not None:
            detail = f": {build.message}" if build.message else ""
            say(f"kernelbench: build {done}/{total} {build.status} {build.candidate.name} "
                f"({build.seconds:.1f} s, {elapsed_s:.1f} s elapsed){detail}")

    def on_header(folder: Path, seconds: float, made: bool) -> None:
        if say is not None:
            say(header_line(folder, seconds, made))

    return BuildPool(planned, arch, jobs, settings.build_timeout_s, on_done,
                     protected if settings.confine != "off" else None,
                     builds.compiler_jobs(jobs, processes, shared), on_header=on_header,
                     headers=cache_root / builds.HEADERS_FOLDER if settings.build_headers
                     else None, open_ended=open_ended, split=split).start()


class OpenPool:
    """An open-ended pool of one process (a session's, or a cluster node's), started at its
    first build: the torch header that builds like it share is precompiled for that build
    (pch.py), and the later builds of its command use it."""

    def __init__(self, settings: Settings, device: str, arch: str):
        self.settings, self.device, self.arch = settings, device, arch
        self._pool: BuildPool | None = None

    def add(self, build: builds.Build) -> builds.Build:
        """The build an attempt waits for: queued, or the one the pool already has for the
        same source."""
        if self._pool is None:
            self._pool = start_pool(self.settings, self.device, self.arch, [build],
                                    processes=1, open_ended=True)
            return build
        return self._pool.add(build)

    def drop(self, folder: Path) -> None:
        if self._pool is not None:
            self._pool.drop(folder)

    def close(self, stop: bool = False) -> None:
        if self._pool is not None:
            self._pool.close(stop=stop)


def pool_jobs(settings: Settings, device: str, processes: int) -> int:
    """The builds each of `processes` processes runs at once, as start_pool sizes its pool."""
    return _sizes(settings, device, processes)[2]


def _sizes(settings: Settings, device: str, processes: int
           ) -> tuple[cores.CoreSplit | None, int | None, int]:
    """The run's split of the cores, the cores its builds may use (None: all) and the builds
    each process runs at once."""
    split = cores.split_for(settings.build_cores, device)
    shared = len(split.shared) if split is not None else None
    return split, shared, builds.build_jobs(settings.build_jobs, processes, shared)


def plan_line(planned: list[builds.Build], jobs: int) -> str:
    """What a run is about to build: how many, how many cached or failed before."""
    pending = sum(build.status == "pending" for build in planned)
    failed_before = sum(build.status == "failed" for build in planned)
    return (f"kernelbench: {len(planned)} extension(s): {pending} to build, "
            f"{len(planned) - pending - failed_before} cached, {failed_before} failed before, "
            f"{jobs} at a time while the items run")


def header_line(folder: Path, seconds: float, made: bool) -> str:
    """The progress line for a precompiled torch header the builds' pool compiled."""
    if not made:
        return (f"kernelbench: torch/extension.h could not be precompiled ({folder / 'pch.log'}); "
                "its builds parse it themselves")
    try:  # told from the pool's thread, which nothing about a header may stop
        size = f", {(folder / pch.PRECOMPILED).stat().st_size / 1e9:.2f} GB"
    except OSError:
        size = ""
    return (f"kernelbench: torch/extension.h precompiled in {seconds:.1f} s for the builds "
            f"that share its command ({folder}{size})")
