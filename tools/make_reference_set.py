"""Write candidates/reference: every problem's eager Model, renamed ModelNew, as a candidate.

The reference set calibrates the harness: it is correct by construction and its speedups
must sit near 1.0. Run again after changing a problem; tests check the set is in sync.

    python tools/make_reference_set.py [PROBLEMS_DIR] [OUT_DIR]
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODEL_NAME = re.compile(r"\bModel\b")


def reference_source(problem_source: str, relative_name: str) -> str:
    header = (f"# Calibration candidate generated from problems/{relative_name} by "
              "tools/make_reference_set.py: the eager reference, renamed ModelNew.\n")
    return header + MODEL_NAME.sub("ModelNew", problem_source)


def expected_files(problems_dir: Path) -> dict[Path, str]:
    """Relative output path -> content, for every problem file."""
    files = {}
    for path in sorted(problems_dir.glob("level*/*.py")):
        relative = path.relative_to(problems_dir)
        files[relative] = reference_source(path.read_text(), relative.as_posix())
    return files


def main(argv: list[str]) -> int:
    problems_dir = Path(argv[1]) if len(argv) > 1 else ROOT / "problems"
    out_dir = Path(argv[2]) if len(argv) > 2 else ROOT / "candidates" / "reference"
    files = expected_files(problems_dir)
    for stale in out_dir.glob("level*/*.py"):
        if stale.relative_to(out_dir) not in files:
            stale.unlink()
    for relative, text in files.items():
        target = out_dir / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    print(f"wrote {len(files)} reference candidates to {out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
