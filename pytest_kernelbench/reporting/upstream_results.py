"""Upstream KernelBench's own result files, read as this plugin's records. Pure functions.

Upstream's `scripts/eval_from_generations.py` writes `runs/<run>/eval_results.json`: per problem
id, a list of samples (`sample_id`, `compiled`, `correctness`, `runtime` in ms, `metadata`);
older versions keep one sample, or samples keyed by id. Its speedups come from a separate timing
file of the eager baseline (`results/timing/<hardware>/baseline_time_torch.json`: per level, per
problem file, `mean` in ms). Read together they give records that `kernelbench-report` scores,
merges and compares like a report of ours, so a published upstream figure can sit beside a run
of this plugin. Their `upstream` verdict is the file's own.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pytest_kernelbench import faults
from pytest_kernelbench.record import Record
from pytest_kernelbench.settings import FIELD_DEFAULTS

_FILE_NAME = re.compile(r"^(\d+)_(.+?)(\.py)?$")


class UpstreamResultsError(ValueError):
    pass


def is_eval_results(document: Any) -> bool:
    """Whether a JSON document is upstream's eval_results.json (problem ids mapping to results)."""
    if not isinstance(document, dict) or not document or "results" in document:
        return False
    return all(key.isdigit() and isinstance(value, (list, dict))
               for key, value in document.items())


def samples(entry: Any) -> list[dict]:
    """One problem's results as a list, whichever of upstream's layouts holds them."""
    if isinstance(entry, list):
        return [s for s in entry if isinstance(s, dict)]
    if isinstance(entry, dict) and "compiled" in entry:
        return [entry]
    if isinstance(entry, dict):  # samples keyed by their id
        return [{"sample_id": int(key) if str(key).isdigit() else key, **value}
                for key, value in entry.items() if isinstance(value, dict)]
    return []


def baseline_means_ms(baseline: dict, level: int) -> dict[int, tuple[str, float]]:
    """{problem id: (name, mean eager time in ms)} from an upstream timing file."""
    table = baseline.get(f"level{level}")
    if not isinstance(table, dict):
        raise UpstreamResultsError(f"the timing file has no level{level} table "
                                   f"(it has: {', '.join(sorted(baseline)) or 'nothing'})")
    means = {}
    for file_name, stats in table.items():
        match = _FILE_NAME.match(file_name)
        if match and isinstance(stats, dict) and isinstance(stats.get("mean"), (int, float)):
            means[int(match.group(1))] = (match.group(2), float(stats["mean"]))
    return means


def _status(sample: dict, speedup: float | None, p: float) -> str:
    if not sample.get("compiled"):
        return faults.COMPILE_ERROR
    if not sample.get("correctness"):
        metadata = sample.get("metadata") or {}
        return faults.RUNTIME_ERROR if any("runtime_error" in key for key in metadata) \
            else faults.MISMATCH
    return faults.SLOWER if speedup is not None and speedup <= p else faults.PASSED


def _error(sample: dict) -> str | None:
    for key, value in (sample.get("metadata") or {}).items():
        if "error" in key or "issue" in key:
            return f"{key}: {value}"[:300]
    return None


def records_from_eval_results(document: dict, level: int, set_name: str,
                              baseline: dict | None = None,
                              p: float = FIELD_DEFAULTS["p"],
                              rules: str = "main") -> list[Record]:
    """Records (record.Record's always-present fields) for every problem of the level the
    timing file lists, or of the results file alone without one; missing where it has none.
    rules: the upstream version that wrote the file (its `upstream` verdict's rules)."""
    means = baseline_means_ms(baseline, level) if baseline is not None else {}
    ids = sorted({int(key) for key in document} | set(means))
    records: list[Record] = []
    for problem_id in ids:
        name = means.get(problem_id, (f"problem_{problem_id}", 0.0))[0]
        base: Record = {"level": level, "problem_id": problem_id, "problem": name,
                        "candidate_set": set_name, "candidate_path": None, "compiled": False,
                        "correct": False, "speedup": None, "baseline_time": None,
                        "candidate_time": None, "error": None, "extension": None,
                        "extension_error": None, "upstream": None, "tf32_by_candidate": None}
        found = samples(document.get(str(problem_id)))
        if not found:
            records.append({**base, "sample": "s0", "status": faults.MISSING,
                            "error": "no result in upstream's file"})
            continue
        for sample in found:
            runtime_ms = sample.get("runtime")
            runtime_ms = float(runtime_ms) if isinstance(runtime_ms, (int, float)) \
                and runtime_ms > 0 else None
            mean_ms = means.get(problem_id, ("", 0.0))[1] or None
            correct = bool(sample.get("compiled") and sample.get("correctness"))
            speedup = mean_ms / runtime_ms if correct and mean_ms and runtime_ms else None
            compiled = bool(sample.get("compiled"))
            records.append({**base, "sample": f"s{sample.get('sample_id', 0)}",
                            "compiled": compiled, "correct": correct, "speedup": speedup,
                            "baseline_time": mean_ms / 1e3 if mean_ms else None,
                            "candidate_time": runtime_ms / 1e3 if runtime_ms else None,
                            "status": _status(sample, speedup, p), "error": _error(sample),
                            "upstream": {"rules": rules, "compiled": compiled,
                                         "correct": correct, "speedup": speedup}})
    return records


def set_name_for(path: Path) -> str:
    """runs/<run>/eval_results.json -> '<run> (upstream)'."""
    return f"{path.parent.name or path.stem} (upstream)"
