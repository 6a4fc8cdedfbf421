"""Finding problems and candidates on disk, and pairing them into cases. Pure file-system logic."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

PROBLEM_FILE = re.compile(r"^(?P<id>\d+)_(?P<name>.+)\.py$")
LEVEL_DIR = re.compile(r"^level(?P<level>\d+)$")
# Upstream KernelBench's generated runs: level_<L>_problem_<P>_sample_<S>_kernel.py in one folder.
UPSTREAM_RUN_FILE = re.compile(
    r"^level_(?P<level>\d+)_problem_(?P<id>\d+)_sample_(?P<sample>\d+)_kernel\.py$"
)
# This project's layout: level<L>/<id>[_anything].py, or level<L>/<id>[_anything]/<sample>.py.
OWN_FILE = re.compile(r"^(?P<id>\d+)(_.*)?\.py$")
OWN_DIR = re.compile(r"^(?P<id>\d+)(_.*)?$")


@dataclass(frozen=True, order=True)
class Problem:
    level: int
    problem_id: int
    name: str
    path: Path

    @property
    def key(self) -> str:
        """level1/19_ReLU: the part of every item id that names the problem."""
        return f"level{self.level}/{self.problem_id}_{self.name}"


@dataclass(frozen=True, order=True)
class Candidate:
    set_name: str
    level: int
    problem_id: int
    sample: str
    path: Path


@dataclass(frozen=True)
class Case:
    """One (problem, candidate set, sample); candidate is None when the set has none."""

    problem: Problem
    set_name: str
    sample: str
    candidate: Candidate | None

    @property
    def id(self) -> str:
        return f"{self.set_name}-{self.sample}"


class DiscoveryError(Exception):
    """A folder that cannot be read as a problem or candidate set."""


def find_problems(root: Path, levels: Iterable[int] = (1, 2, 3)) -> list[Problem]:
    """Problems under root/level<N>/, sorted by level and id."""
    wanted = set(levels)
    level_dirs = [p for p in sorted(root.iterdir()) if p.is_dir() and LEVEL_DIR.match(p.name)]
    if not level_dirs:
        raise DiscoveryError(f"{root}: no level<N>/ folders (expected e.g. {root}/level1/1_Name.py)")
    problems = []
    seen: dict[tuple[int, int], Path] = {}
    for level_dir in level_dirs:
        level = int(LEVEL_DIR.match(level_dir.name)["level"])  # type: ignore[index]
        if level not in wanted:
            continue
        for path in sorted(level_dir.glob("*.py")):
            match = PROBLEM_FILE.match(path.name)
            if not match:
                continue
            key = (level, int(match["id"]))
            if key in seen:
                raise DiscoveryError(f"two problems with id {key[1]} in level {level}: "
                                     f"{seen[key].name} and {path.name}")
            seen[key] = path
            problems.append(Problem(level, key[1], match["name"], path))
    return sorted(problems)


def find_candidates(root: Path) -> list[Candidate]:
    """Candidates of one set, in either supported layout (both may be mixed in one folder)."""
    set_name = root.name
    found = []
    for path in sorted(root.glob("level_*_problem_*_sample_*_kernel.py")):
        match = UPSTREAM_RUN_FILE.match(path.name)
        if match:
            found.append(Candidate(set_name, int(match["level"]), int(match["id"]),
                                   f"s{int(match['sample'])}", path))
    for level_dir in sorted(p for p in root.iterdir() if p.is_dir() and LEVEL_DIR.match(p.name)):
        level = int(LEVEL_DIR.match(level_dir.name)["level"])  # type: ignore[index]
        for entry in sorted(level_dir.iterdir()):
            if entry.is_file() and (match := OWN_FILE.match(entry.name)):
                found.append(Candidate(set_name, level, int(match["id"]), "s0", entry))
            elif entry.is_dir() and (match := OWN_DIR.match(entry.name)):
                for sample in sorted(entry.glob("*.py")):
                    found.append(Candidate(set_name, level, int(match["id"]), sample.stem, sample))
    _reject_duplicates(found)
    return sorted(found)


def _reject_duplicates(candidates: list[Candidate]) -> None:
    seen: dict[tuple[int, int, str], Path] = {}
    for cand in candidates:
        key = (cand.level, cand.problem_id, cand.sample)
        if key in seen:
            raise DiscoveryError(
                f"set {cand.set_name}: two files for level {key[0]} problem {key[1]} "
                f"sample {key[2]}: {seen[key]} and {cand.path}"
            )
        seen[key] = cand.path


def pair(problems: list[Problem], candidate_sets: dict[str, list[Candidate]]) -> list[Case]:
    """Every problem crossed with every set; a problem a set lacks gets one empty case."""
    cases = []
    for problem in problems:
        for set_name, candidates in candidate_sets.items():
            mine = [c for c in candidates
                    if (c.level, c.problem_id) == (problem.level, problem.problem_id)]
            if not mine:
                cases.append(Case(problem, set_name, "missing", None))
            cases.extend(Case(problem, set_name, c.sample, c) for c in mine)
    return cases


def misnamed(problems: list[Problem], candidates: list[Candidate]) -> list[tuple[Candidate, Problem]]:
    """Candidates whose file (or folder) name says another problem than their id's problem:
    `level1/19_Softmax.py` is judged against 19_ReLU. Upstream's run files carry no name."""
    by_key = {(p.level, p.problem_id): p for p in problems}
    found = []
    for candidate in candidates:
        problem = by_key.get((candidate.level, candidate.problem_id))
        in_level_dir = LEVEL_DIR.match(candidate.path.parent.name) is not None
        named = OWN_FILE.match(candidate.path.name) if in_level_dir \
            else OWN_DIR.match(candidate.path.parent.name)
        if problem is None or named is None:
            continue
        name = (named.group(2) or "").lstrip("_")
        if name and _plain(name) != _plain(problem.name):
            found.append((candidate, problem))
    return found


def _plain(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


@dataclass(frozen=True, order=True)
class Unmatched:
    """A file of a candidate set that no problem is judged against, and why."""

    shown: str  # the path from the set's parent folder: `my_set/level4/1_X.py`
    why: str
    path: Path


# The levels a run can select (options.parse_levels); a candidate of another level never runs.
SELECTABLE_LEVELS = (1, 2, 3)


def problem_keys(root: Path) -> set[tuple[int, int]]:
    """(level, id) of every problem file under root in a level a run can select, whatever the
    run selects."""
    keys = set()
    for level in SELECTABLE_LEVELS:
        for path in (root / f"level{level}").glob("*.py"):
            if match := PROBLEM_FILE.match(path.name):
                keys.add((level, int(match["id"])))
    return keys


def unmatched(root: Path, candidates: list[Candidate],
              problems: set[tuple[int, int]]) -> list[Unmatched]:
    """Every Python file of the set at root that is judged against no problem of the problems
    folder, at any level: a candidate whose level or id it lacks (a typo, or `level4/`), and a
    file whose name or place reads as no candidate at all (`level1/ReLU.py`). Candidates of
    problems the run leaves out (--kb-level, --kb-tags, -k) match their problem: not here."""
    levels = {level for level, _ in problems}
    found = []
    for candidate in candidates:
        if (candidate.level, candidate.problem_id) in problems:
            continue
        why = f"no problem {candidate.problem_id} in level{candidate.level}/" \
            if candidate.level in levels else f"no level{candidate.level}/ among the problems"
        found.append(Unmatched(_shown(root, candidate.path), why, candidate.path))
    read = {candidate.path for candidate in candidates}
    for path in root.rglob("*.py"):
        inside = path.relative_to(root).parts
        if path in read or path.name == "__init__.py" \
                or any(part.startswith(".") or part == "__pycache__" for part in inside):
            continue
        found.append(Unmatched(_shown(root, path), "its name or folder gives no level and id",
                               path))
    return sorted(found)


def _shown(root: Path, path: Path) -> str:
    return str(Path(root.name) / path.relative_to(root))
