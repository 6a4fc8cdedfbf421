"""Write the candidate sets generated from the problems: `reference` and `torch_compile`.

- candidates/reference: every problem's eager Model, renamed ModelNew. It calibrates the
  harness: correct by construction, its speedups must sit near 1.0.
- candidates/torch_compile: every problem's own Model under torch.compile (default mode), as
  ModelNew. It is the bar a generated kernel has to clear to be worth writing by hand; run it
  beside a set (`--kb-candidates=candidates/torch_compile --kb-candidates=runs/mine`) or time
  candidates against it (`--kb-baseline=compile`).

Run again after changing a problem; tests/test_problem_suite.py checks both sets are in sync.

    python tools/make_candidate_sets.py [PROBLEMS_DIR] [CANDIDATES_DIR]
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODEL_NAME = re.compile(r"\bModel\b")
COMPILED = '''

class ModelNew(nn.Module):
    """The problem's own Model under torch.compile: built with the same arguments, so it draws
    the same weights, and compiled at its first call."""

    def __init__(self, *args):
        super().__init__()
        self.compiled = torch.compile(Model(*args))

    def forward(self, *inputs):
        return self.compiled(*inputs)
'''


def reference_source(problem_source: str, relative_name: str) -> str:
    header = (f"# Calibration candidate generated from problems/{relative_name} by "
              "tools/make_candidate_sets.py: the eager reference, renamed ModelNew.\n")
    return header + MODEL_NAME.sub("ModelNew", problem_source)


def compile_source(problem_source: str, relative_name: str) -> str:
    header = (f"# Generated from problems/{relative_name} by tools/make_candidate_sets.py: "
              "the problem's Model under torch.compile.\n")
    return header + problem_source.rstrip("\n") + "\n" + COMPILED


SETS: dict[str, Callable[[str, str], str]] = {"reference": reference_source,
                                               "torch_compile": compile_source}


def expected_files(problems_dir: Path, make: Callable[[str, str], str]) -> dict[Path, str]:
    """Relative output path -> content, for every problem file."""
    files = {}
    for path in sorted(problems_dir.glob("level*/*.py")):
        relative = path.relative_to(problems_dir)
        files[relative] = make(path.read_text(), relative.as_posix())
    return files


def main(argv: list[str]) -> int:
    problems_dir = Path(argv[1]) if len(argv) > 1 else ROOT / "problems"
    candidates_dir = Path(argv[2]) if len(argv) > 2 else ROOT / "candidates"
    for name, make in SETS.items():
        out_dir = candidates_dir / name
        files = expected_files(problems_dir, make)
        for stale in out_dir.glob("level*/*.py"):
            if stale.relative_to(out_dir) not in files:
                stale.unlink()
        for relative, text in files.items():
            target = out_dir / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        print(f"wrote {len(files)} candidates to {out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
