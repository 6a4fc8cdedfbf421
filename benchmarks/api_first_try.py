"""A first try of the Python API on a CPU: one problem of the shipped suite judged through
`evaluate` against its own reference (eager PyTorch as the candidate), timed, with the peak
memory of the whole process tree (main_job.measured).

  python benchmarks/api_first_try.py level1/100_HingeLoss.py [OPTIONS_JSON]
  python benchmarks/api_first_try.py level1/19_ReLU.py '{"trials": 3, "time_budget_s": 0.1}'

Prints the wall time and memory, then the record's status and the seconds each stage held.
"""

from __future__ import annotations

import sys

from main_job import measured

ONE_TRY = """
import json, sys
from pytest_kernelbench import evaluate
from pytest_kernelbench.settings import bundled_problems
from pytest_kernelbench.suite.generated import reference_source
problem = bundled_problems() / sys.argv[1]
record = evaluate(problem, reference_source(problem.read_text(), problem.name), device="cpu",
                  **json.loads(sys.argv[2]))
held = {stage: round(end - start, 1) for stage, (start, end) in (record["held"] or {}).items()}
print(record["status"], "held (s):", held)
"""


def main(argv: list[str]) -> int:
    problem, options = argv[0], argv[1] if len(argv) > 1 else "{}"
    code, output = measured([sys.executable, "-c", ONE_TRY, problem, options])
    print(output[-1].strip() if output else "(no output)")
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
