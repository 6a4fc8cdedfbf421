"""The README's main job, timed, with the peak memory of its whole process tree.

  python benchmarks/main_job.py [EXTRA PYTEST ARGS...]   (e.g. --kb-report=FILE)

Runs the main job's pytest command (the reference set on the starter problems, CPU) and samples
every 0.5 s the memory of pytest, its zygote and the workers (from /proc). Prints the wall time,
the peaks of the tree's proportional set size (shared pages counted once) and of its summed
RSS (shared pages counted in each process), the largest single process's peak RSS, then the
last line of pytest's output.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

MAIN_JOB = ["--kb-candidates=builtin:reference", "--kb-tags=starter", "--kb-trials=3",
            "--benchmark-max-time=0.1", "--benchmark-min-rounds=3"]
PAGE = os.sysconf("SC_PAGE_SIZE")


def tree(root: int) -> list[int]:
    """root and every process below it (read from /proc, children by parent id)."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(parents.get(pid, []))
    return found


def pss_bytes(pid: int) -> int:
    """Proportional set size: pages shared by several processes (the zygote's, forked into
    every worker; torch's libraries) are split among them, so the sum is the tree's memory."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except (OSError, IndexError, ValueError):
        pass
    return 0


def rss_bytes(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE
    except (OSError, IndexError, ValueError):
        return 0


def measured(command: list[str]) -> tuple[int, list[str]]:
    """Run command, sampling its process tree's memory; print the wall time and the peaks.
    Its exit status and its output lines."""
    started = time.monotonic()
    job = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    peak_sum = peak_one = peak_pss = 0
    output: list[str] = []
    assert job.stdout is not None
    os.set_blocking(job.stdout.fileno(), False)
    while job.poll() is None:
        pids = tree(job.pid)
        sizes = [rss_bytes(pid) for pid in pids]
        peak_sum, peak_one = max(peak_sum, sum(sizes)), max(peak_one, max(sizes, default=0))
        peak_pss = max(peak_pss, sum(pss_bytes(pid) for pid in pids))
        output.extend(job.stdout.readlines())
        time.sleep(0.5)
    output.extend(job.stdout.readlines())
    wall = time.monotonic() - started
    print(f"wall {wall // 60:.0f} min {wall % 60:.0f} s; peak memory of the tree: "
          f"PSS {peak_pss / 1e9:.2f} GB, RSS summed {peak_sum / 1e9:.2f} GB, "
          f"largest process's RSS {peak_one / 1e9:.2f} GB")
    return job.returncode, output


def main(argv: list[str]) -> int:
    code, output = measured([sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                             *MAIN_JOB, *argv])
    print(output[-1].strip() if output else "(no output)")
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
