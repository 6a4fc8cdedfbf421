"""Write the candidate sets generated from the problems (`reference`, `torch_compile`,
`cuda_epilogue`, `cpp_epilogue`) into a folder, to read or edit them. A run needs no files:
`--kb-candidates=builtin:reference` makes the set from the run's problems
(pytest_kernelbench/suite/generated.py says what each holds).

    python tools/make_candidate_sets.py OUT_DIR [--problems DIR]   -> OUT_DIR/reference, ...
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pytest_kernelbench.suite import generated

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", type=Path, help="each set goes to OUT_DIR/<set name>")
    parser.add_argument("--problems", type=Path, default=ROOT / "problems",
                        help="problem folder (default: this repository's problems)")
    args = parser.parse_args(argv)
    for name in generated.SETS:
        count = generated.write_set(args.problems, name, args.out_dir / name)
        print(f"wrote {count} candidates to {args.out_dir / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
