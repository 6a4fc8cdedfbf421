"""Set this harness's verdicts on a real candidate set beside upstream KernelBench's.

  python benchmarks/agreement.py pick REPORT.json            L/ID of every record to check
  python benchmarks/agreement.py merge OUT.json PART.json...  upstream results in one file
  python benchmarks/agreement.py table UPSTREAM.json REPORT.json... [--notes NOTES.yaml]
                                        [--set DIR]
  python benchmarks/agreement.py stability FIRST.json SECOND.json   verdicts that moved
  python benchmarks/agreement.py sidebyside UPSTREAM.json REPORT.json --upstream-wall S
                                        --ours-wall S   wall time per candidate of each

pick lists what upstream's harness must judge: every candidate this harness does not pass, and
every one whose verdict under upstream's rules (computed in the same run) differs from ours.
table prints one Markdown row per candidate: our status and speedup, upstream's verdict and
speedup, who is right and the evidence. The evidence is our record's error, or a line from
NOTES (keyed "L/ID") where a disagreement needed a closer look. With --set, every candidate file
of the set (level_<L>_problem_<ID>_sample_0_kernel.py) that no report holds gets a row too.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import yaml

AGREE, UNKNOWN = "agree", "?"
AGREE_BY_RULES = "agree (upstream's rules in our run)"


def records(report_path: str) -> dict[str, dict]:
    """Records of a report (or its .jsonl stream) by "L/ID", missing candidates left out."""
    path = Path(report_path)
    if path.suffix == ".jsonl":
        rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    else:
        rows = json.loads(path.read_text())["results"]
    return {f"{r['level']}/{r['problem_id']}": r for r in rows
            if r["status"] not in ("missing", None)}  # None: stopped before a verdict


def ours_passed(record: dict) -> bool:
    return record["status"] in ("passed", "slower")


def pick(report: dict[str, dict]) -> list[str]:
    chosen = []
    for key, record in report.items():
        theirs = (record.get("upstream") or {}).get("correct")
        if not ours_passed(record) or theirs is not True:
            chosen.append(key)
    return sorted(chosen, key=lambda k: tuple(map(int, k.split("/"))))


def merge(parts: list[str]) -> list[dict]:
    rows = []
    for part in parts:
        rows += json.loads(Path(part).read_text())
    return sorted(rows, key=lambda r: (r["level"], r["id"]))


def upstream_says(result: dict | None) -> tuple[bool | None, str]:
    """(correct, words) of upstream's harness; correct None where it gave no verdict."""
    if result is None:
        return None, "not run"
    if result.get("skipped") or result.get("timeout"):
        return None, "no verdict (" + ("timed out" if result.get("timeout") else "skipped") + ")"
    if "compiled" not in result:
        return None, f"no verdict (exit {result.get('rc')})"
    if not result["compiled"]:
        return False, "not compiled"
    if not result.get("correct"):
        return False, "incorrect"
    speedup = result.get("speedup")
    return True, f"correct, {speedup:.2f}x" if speedup else "correct"


def judge(record: dict, result: dict | None, notes: dict[str, str], key: str) -> tuple[str, str]:
    """(who is right, evidence) for one candidate."""
    theirs, _ = upstream_says(result)
    mine = ours_passed(record)
    evidence = notes.get(key) or (record.get("error") or "").splitlines()[0:1]
    if isinstance(evidence, list):
        evidence = evidence[0] if evidence else ""
    if theirs is None:
        ruled = (record.get("upstream") or {}).get("correct")
        return (AGREE_BY_RULES if mine and ruled else notes.get(key + ":right") or UNKNOWN), \
            evidence
    if theirs == mine:
        return AGREE, evidence
    return (notes.get(key + ":right") or UNKNOWN), evidence


def table(report: dict[str, dict], results: list[dict], notes: dict[str, str],
          unrun: list[str] = ()) -> list[str]:
    by_key = {f"{r['level']}/{r['id']}": r for r in results}
    lines = ["| candidate | problem | ours | our speedup | upstream (its harness) | "
             "upstream rules, our run | right | evidence |",
             "|---|---|---|---|---|---|---|---|"]
    for key in sorted(report, key=lambda k: tuple(map(int, k.split("/")))):
        record = report[key]
        result = by_key.get(key)
        _, words = upstream_says(result)
        if result is None and ours_passed(record):
            words = "not run (ours passed)"
        rule = record.get("upstream") or {}
        rule_words = ("correct" if rule.get("correct") else
                      "unknown" if rule.get("correct") is None and rule.get("compiled")
                      else "incorrect" if rule.get("compiled") else "not compiled")
        if rule.get("speedup"):
            rule_words += f", {rule['speedup']:.2f}x"
        speedup = f"{record['speedup']:.2f}" if record.get("speedup") else ""
        right, evidence = judge(record, result, notes, key)
        evidence = evidence.replace("|", "\\|")[:240]
        lines.append(f"| {key} | {record['problem']} | {record['status']} | {speedup} | {words} | "
                     f"{rule_words} | {right} | {evidence} |")
    lines += [f"| {key} | | not run yet | | | | | |" for key in unrun]
    return lines


def stability(first: dict[str, dict], second: dict[str, dict]) -> tuple[list[str], int, int]:
    """(lines for verdicts that moved, candidates in both runs, moves between passed and
    slower): a move between passed and slower is a speedup on either side of p, not a changed
    verdict on the kernel."""
    lines, at_p = [], 0
    both = sorted(first.keys() & second.keys(), key=lambda k: tuple(map(int, k.split("/"))))
    for key in both:
        a, b = first[key]["status"], second[key]["status"]
        if a == b:
            continue
        if ours_passed(first[key]) and ours_passed(second[key]):
            at_p += 1
            continue
        lines.append(f"{key}: {a} -> {b} | {(first[key].get('error') or '')[:100]} | "
                     f"{(second[key].get('error') or '')[:100]}")
    return lines, len(both), at_p


def sidebyside(results: list[dict], report: dict[str, dict], upstream_wall_s: float,
               ours_wall_s: float) -> list[str]:
    """Wall time per candidate of upstream's harness and of ours on one list, each over the
    candidates it gave a verdict on, and how often the two agree on correctness."""
    judged = {f"{r['level']}/{r['id']}": r for r in results if upstream_says(r)[0] is not None}
    serial = sorted(r["wall_s"] for r in judged.values() if r.get("wall_s"))
    lines = [f"upstream: {len(judged)} of {len(results)} judged in {upstream_wall_s:.0f} s: "
             f"{upstream_wall_s / max(len(judged), 1):.1f} s per candidate"
             + (f" (one candidate's own process: median {serial[len(serial) // 2]:.1f} s)"
                if serial else ""),
             f"ours: {len(report)} judged in {ours_wall_s:.0f} s: "
             f"{ours_wall_s / max(len(report), 1):.1f} s per candidate"]
    if judged and report:
        ratio = (upstream_wall_s / len(judged)) / (ours_wall_s / len(report))
        both = judged.keys() & report.keys()
        same = sum(upstream_says(judged[k])[0] == ours_passed(report[k]) for k in both)
        lines.append(f"upstream's wall time per candidate is {ratio:.1f}x ours; correctness "
                     f"verdicts agree on {same} of the {len(both)} both judged")
        estimate = whole_set_estimate(list(judged.values()), report)
        if estimate is not None:
            lines.append(f"upstream on our {len(report)}, each level at its sample's mean "
                         f"process time: {estimate:.0f} s, {estimate / ours_wall_s:.1f}x ours")
    return lines


def whole_set_estimate(judged: list[dict], report: dict[str, dict]) -> float | None:
    """Seconds upstream's harness would take over the report's candidates, one at a time:
    each level's count times the mean wall time of that level's candidates in the sample (a
    sample drawn evenly from the levels over-weights level 3, whose candidates cost more).
    None when a level of the report has no timed sample."""
    by_level: dict[int, list[float]] = {}
    for r in judged:
        if r.get("wall_s"):
            by_level.setdefault(int(r["level"]), []).append(r["wall_s"])
    counts: dict[int, int] = {}
    for key in report:
        level = int(key.split("/")[0])
        counts[level] = counts.get(level, 0) + 1
    if any(level not in by_level for level in counts):
        return None
    return sum(n * statistics.fmean(by_level[level]) for level, n in counts.items())


def set_keys(folder: str) -> list[str]:
    """"L/ID" of every candidate file of a set in upstream's layout."""
    keys = []
    for path in Path(folder).glob("level_*_problem_*_sample_*_kernel.py"):
        parts = path.name.split("_")
        keys.append(f"{parts[1]}/{parts[3]}")
    return sorted(set(keys), key=lambda k: tuple(map(int, k.split("/"))))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("pick").add_argument("report")
    merging = sub.add_parser("merge")
    merging.add_argument("out")
    merging.add_argument("parts", nargs="+")
    tabling = sub.add_parser("table")
    tabling.add_argument("upstream")
    tabling.add_argument("reports", nargs="+")
    tabling.add_argument("--notes", help="YAML: 'L/ID': evidence, 'L/ID:right': ours|upstream")
    tabling.add_argument("--set", help="the candidate folder, to list what no report holds")
    steady = sub.add_parser("stability")
    steady.add_argument("first")
    steady.add_argument("second")
    beside = sub.add_parser("sidebyside")
    beside.add_argument("upstream")
    beside.add_argument("report")
    beside.add_argument("--upstream-wall", type=float, required=True, help="seconds")
    beside.add_argument("--ours-wall", type=float, required=True, help="seconds")
    args = parser.parse_args(argv)
    if args.command == "sidebyside":
        rows = json.loads(Path(args.upstream).read_text())
        print("\n".join(sidebyside(rows, records(args.report), args.upstream_wall,
                                   args.ours_wall)))
        return 0
    if args.command == "stability":
        moved, both, at_p = stability(records(args.first), records(args.second))
        print("\n".join(moved))
        print(f"{both} candidates in both runs: {both - len(moved) - at_p} same status, "
              f"{at_p} between passed and slower (speedup at p), {len(moved)} verdicts moved")
        return 1 if moved else 0
    if args.command == "pick":
        print("\n".join(pick(records(args.report))))
    elif args.command == "merge":
        rows = merge(args.parts)
        Path(args.out).write_text(json.dumps(rows, indent=1))
        print(f"{len(rows)} upstream results in {args.out}")
    else:
        notes = yaml.safe_load(Path(args.notes).read_text()) if args.notes else {}
        results = json.loads(Path(args.upstream).read_text())
        report: dict[str, dict] = {}
        for path in args.reports:
            report.update(records(path))
        unrun = [key for key in set_keys(args.set) if key not in report] if args.set else []
        print("\n".join(table(report, results, {str(k): v for k, v in notes.items()}, unrun)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
