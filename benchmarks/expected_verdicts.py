"""Fail when a run's verdicts are not the ones its candidates declare, or differ between runs.

    python benchmarks/expected_verdicts.py REPORT.json [OTHER.json ...]

A candidate file may declare what the harness must say of it in a comment line such as
`# expect: cuda_error` or `# expect: passed|slower`; a file without one is an honest candidate
and must be judged correct (`passed` or `slower`). Where `passed` or `slower` is expected,
`inconclusive` is too: a correct candidate whose timing could not tell its speedup from p (a
candidate as fast as eager reads so about half the time). With several reports (the same candidates
on another GPU, or under xdist), each record's status must also be the same in every report.
Exit status 1 on any false verdict or difference, so a GPU script can stop on it.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

EXPECT = re.compile(r"^#\s*expect:\s*([\w|]+)", re.MULTILINE)
HONEST = frozenset({"passed", "slower"})


def expected(candidate_path: str | None) -> frozenset[str]:
    if candidate_path is None:
        return frozenset({"missing"})
    found = EXPECT.search(Path(candidate_path).read_text(errors="replace"))
    allowed = frozenset(found.group(1).split("|")) if found else HONEST
    return allowed | {"inconclusive"} if allowed & HONEST else allowed


def key(record: dict) -> str:
    return f"{record['candidate_set']}/L{record['level']}/{record['problem_id']}/{record['sample']}"


def false_verdicts(records: list[dict]) -> list[str]:
    wrong = []
    for record in records:
        allowed = expected(record.get("candidate_path"))
        if record["status"] not in allowed:
            wrong.append(f"{key(record)}: {record['status']} ({record.get('error')}), "
                         f"expected {'|'.join(sorted(allowed))}")
    return wrong


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    runs = {path: json.loads(Path(path).read_text())["results"] for path in argv}
    problems = 0
    for path, records in runs.items():
        wrong = false_verdicts(records)
        devices = sorted({(r.get("placement") or {}).get("device") or "?" for r in records})
        print(f"{path}: {len(records)} records on {', '.join(devices)}, "
              f"{len(records) - len(wrong)} with the expected verdict")
        for line in wrong:
            print(f"  FALSE VERDICT {line}")
        problems += len(wrong)
    first_path, *others = runs
    first = {key(r): r["status"] for r in runs[first_path]}
    for path in others:
        other = {key(r): r["status"] for r in runs[path]}
        differ = sorted(k for k in first.keys() & other.keys() if first[k] != other[k])
        missing = sorted(first.keys() ^ other.keys())
        print(f"{path} against {first_path}: {len(first.keys() & other.keys()) - len(differ)} "
              f"equal verdicts, {len(differ)} differ, {len(missing)} in one run only")
        for k in differ:
            print(f"  DIFFERS {k}: {first[k]} -> {other[k]}")
        problems += len(differ) + len(missing)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
