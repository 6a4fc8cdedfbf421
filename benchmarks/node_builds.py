"""The same builds in a session's own pool and in a Ray node's build actor, one after the
other, each into an empty build cache.

    python benchmarks/node_builds.py [--count 6] [--order local,ray]
    python benchmarks/node_builds.py --problems P --candidates C --device cuda   # on a GPU host

By default it writes `count` distinct C++ extensions of the example ReLU (one constant apart,
so no two share a build) and builds them for the CPU: it needs the `ray` extra and a C++
compiler, no GPU. With --problems and --candidates (one set, either layout) it builds the
first `count` candidates of that set that build, for --device.

Prints, per side, the wall time of all the builds, each build's status, seconds and phases,
their median, and CPU seconds meanwhile: the host's (/proc/stat: every process, Ray's own
included), the pool's process (this one, or the build actor) and its builds (its reaped
children: build processes and their compilers). Compilers that need more CPU seconds on a
node for the same commands point at the node's processes, not at the build actor's queue.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from pytest_kernelbench.building import builds
from pytest_kernelbench.engine import cluster, prebuild
from pytest_kernelbench.settings import Settings
from pytest_kernelbench.suite import discovery

EXAMPLES = Path(__file__).resolve().parent.parent / "tests" / "examples"
SOURCE = EXAMPLES / "candidates" / "cpp_ext" / "level1" / "2_ReLU.py"


def write_variants(folder: Path, count: int) -> Path:
    """`count` samples of the C++ ReLU, each its own build: set/level1/2_ReLU/v<i>.py."""
    text = SOURCE.read_text()
    samples = folder / "variants" / "level1" / "2_ReLU"
    samples.mkdir(parents=True)
    for index in range(count):
        (samples / f"v{index}.py").write_text(
            text.replace("0.0f ? src[i] : 0.0f", f"0.0f ? src[i] : 0.0f * {index}")
                .replace('"kb_test_cpu_relu"', f'"kb_node_builds_{index}"'))
    return folder / "variants"


def cases_to_build(problems: Path, candidates: Path, count: int) -> list[discovery.Case]:
    found = discovery.pair(discovery.find_problems(problems),
                           {candidates.name: discovery.find_candidates(candidates)})
    wanted = [case for case in found if case.candidate is not None
              and builds.needs_build(case.candidate.path.read_text(errors="replace"))]
    return wanted[:count]


def process_cpu_s(pid: int | str = "self") -> tuple[float, float]:
    """(its own, its reaped children's) CPU seconds of a process, from /proc/PID/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / tick, (int(fields[13]) + int(fields[14])) / tick


def build_host_pid(wait_s: float = 60.0) -> int:
    """The pid of the node's build actor (Ray titles its process `ray::BuildHost`)."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        for entry in Path("/proc").iterdir():
            try:
                if entry.name.isdigit() and \
                        (entry / "cmdline").read_bytes().startswith(b"ray::BuildHost"):
                    return int(entry.name)
            except OSError:
                continue
        time.sleep(0.05)
    raise RuntimeError("no ray::BuildHost process on this host")


def host_busy_s() -> float:
    """The host's busy CPU seconds since boot: user, nice and system."""
    fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    return (int(fields[0]) + int(fields[1]) + int(fields[2])) / os.sysconf("SC_CLK_TCK")


def build_locally(settings: Settings, device: str, cases: list[discovery.Case]
                  ) -> tuple[float, list[dict], float, list[float]]:
    arch = builds.cuda_arch(device)
    wanted = builds.candidates_to_build(cases, device)
    planned = builds.plan(list(wanted), settings.build_cache_root, arch, wanted)
    cpu_before, began = host_busy_s(), time.perf_counter()
    own_before = process_cpu_s()
    pool = prebuild.OpenPool(settings, device, arch)
    added = [pool.add(build) for build in planned]
    while any(build.status in ("pending", "running") for build in added):
        time.sleep(cluster.BUILD_POLL_S)
    wall, busy = time.perf_counter() - began, host_busy_s() - cpu_before
    own = [after - before for after, before in zip(process_cpu_s(), own_before)]
    pool.close()
    return wall, [build.entry() for build in added], busy, own


def build_on_node(settings: Settings, device: str, cases: list[discovery.Case]
                  ) -> tuple[float, list[dict], float, list[float]]:
    import ray

    ray.init(include_dashboard=False, log_to_driver=False)
    try:
        node = cluster.NodeBuilders(settings, device)
        cpu_before, began = host_busy_s(), time.perf_counter()
        follows = [node.build(case) for case in cases]
        pid = build_host_pid()  # its builds' CPU counts once they end, long after this
        own_before = process_cpu_s(pid)
        while any(follow is not None and follow.status in ("pending", "running")
                  for follow in follows):
            time.sleep(cluster.BUILD_POLL_S)
        wall, cpu = time.perf_counter() - began, host_busy_s() - cpu_before
        own = [after - before for after, before in zip(process_cpu_s(pid), own_before)]
        entries = []
        for follow in follows:
            handed = follow.handed() if follow is not None else None
            entries.append(handed[1] if handed else {"status": getattr(follow, "status", None),
                                                     "seconds": None, "candidate": "?"})
        node.close()
        return wall, entries, cpu, own
    finally:
        ray.shutdown()


def show(side: str, wall: float, entries: list[dict], busy: float, own: list[float]) -> None:
    print(f"{side}: {len(entries)} builds in {wall:.1f} s wall; CPU s: host busy {busy:.1f}, "
          f"the pool's process {own[0]:.1f}, its builds {own[1]:.1f}, "
          f"the rest {busy - sum(own):.1f}")
    for entry in entries:
        print(f"  {entry['status']:9} {entry.get('seconds') or 0:7.1f} s  "
              f"{Path(entry['candidate']).name}  {entry.get('phases', {})}")
        if entry.get("message"):
            print(f"    {entry['message'][:300]}")
    seconds = [entry["seconds"] for entry in entries if entry.get("seconds")]
    if seconds:
        print(f"  median {statistics.median(seconds):.1f} s")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=Path, default=EXAMPLES / "problems")
    parser.add_argument("--candidates", type=Path)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--count", type=int, default=6)
    parser.add_argument("--order", default="local,ray")
    args = parser.parse_args(argv)
    problems = args.problems.resolve()
    candidates = args.candidates.resolve() if args.candidates else \
        write_variants(Path(tempfile.mkdtemp(prefix="kb-node-builds-")), args.count)
    cases = cases_to_build(problems, candidates, args.count)
    print(f"{len(cases)} candidates of {candidates}, {os.cpu_count()} cores, "
          f"device {args.device}")
    for side in args.order.split(","):
        cache = Path(tempfile.mkdtemp(prefix=f"kb-node-builds-{side}-"))
        settings = Settings(problems_dir=problems, candidate_dirs=(candidates,),
                            device=args.device, build_cache=cache)
        run = build_locally if side == "local" else build_on_node
        show(side, *run(settings, args.device, cases))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
