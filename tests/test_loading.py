"""Importing problem and candidate files: a candidate sees the problem's namespace as upstream
KernelBench gives it, and keeps its own definitions."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from pytest_kernelbench import evaluate
from pytest_kernelbench.suite import loading

FAST = {"device": "cpu", "trials": 2, "time_budget_s": 0.05, "p": 0.0}

# A problem whose Model uses a module constant and a helper of the file, as KernelBench's do.
PROBLEM = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    def to_2tuple(x):
        return (x, x)

    class Model(nn.Module):
        def __init__(self, low, high):
            super().__init__()
            self.low, self.high = low, high

        def forward(self, x):
            return F.hardtanh(x * to_2tuple(2)[0], self.low, self.high)

    batch_size = 16
    hardtanh_min = -0.5
    hardtanh_max = 0.5

    def get_inputs():
        return [torch.randn(batch_size, 32)]

    def get_init_inputs():
        return [hardtanh_min, hardtanh_max]
""")

# Reads the problem's constants in forward and its helper at import, never defining them.
USES_PROBLEM_NAMES = textwrap.dedent("""
    import torch
    import torch.nn as nn

    SCALE = to_2tuple(2)[0]

    class ModelNew(nn.Module):
        def __init__(self, low, high):
            super().__init__()

        def forward(self, x):
            return torch.clamp(x * SCALE, hardtanh_min, hardtanh_max)
""")

# Defines hardtanh_max itself (a wrong one): its own definition must win.
DEFINES_ITS_OWN = USES_PROBLEM_NAMES.replace("import torch.nn as nn",
                                             "import torch.nn as nn\nhardtanh_max = 0.25")


def write(folder: Path, name: str, source: str) -> Path:
    path = folder / name
    path.write_text(source)
    return path


def test_global_names_tells_reads_from_bindings():
    code = compile(USES_PROBLEM_NAMES + "\nglobal_later = 1\ndef f(local):\n    return local\n",
                   "c.py", "exec")
    reads, binds = loading.global_names(code)
    assert {"to_2tuple", "hardtanh_min", "hardtanh_max", "torch", "SCALE"} <= reads
    assert {"torch", "nn", "SCALE", "ModelNew", "global_later", "f"} == binds
    assert "local" not in reads and "low" not in binds  # a function's locals, a class's body


def test_a_candidate_takes_what_it_does_not_define_from_a_copy_of_the_problem(tmp_path):
    problem = write(tmp_path, "1_Hardtanh.py", PROBLEM)
    candidate = write(tmp_path, "candidate.py", USES_PROBLEM_NAMES)
    module, names = loading.import_candidate(candidate, "kb_test", problem_path=problem)
    assert names == ["hardtanh_max", "hardtanh_min", "to_2tuple"]
    assert (module.hardtanh_min, module.hardtanh_max, module.SCALE) == (-0.5, 0.5, 2)
    judged = loading.import_file(problem, "kb_test_judged")
    assert module.to_2tuple is not judged.to_2tuple  # a copy: the judged problem is its own


def test_a_candidates_own_definition_wins(tmp_path):
    problem = write(tmp_path, "1_Hardtanh.py", PROBLEM)
    candidate = write(tmp_path, "candidate.py", DEFINES_ITS_OWN)
    module, names = loading.import_candidate(candidate, "kb_test", problem_path=problem)
    assert module.hardtanh_max == 0.25 and module.hardtanh_min == -0.5
    assert names == ["hardtanh_min", "to_2tuple"]


def test_upstreams_build_directory_and_os_are_there_as_upstream_sets_them(tmp_path):
    candidate = write(tmp_path, "candidate.py",
                      "FOLDER = BUILD_DIRECTORY\nSEP = os.sep\nclass ModelNew: pass\n")
    module, names = loading.import_candidate(candidate, "kb_test", build_directory="/b")
    assert (module.FOLDER, module.SEP, names) == ("/b", os.sep, ["BUILD_DIRECTORY", "os"])


def test_a_name_defined_nowhere_is_still_a_name_error(tmp_path):
    problem = write(tmp_path, "1_Hardtanh.py", PROBLEM)
    candidate = write(tmp_path, "candidate.py", "X = not_defined_anywhere\n")
    with pytest.raises(NameError, match="not_defined_anywhere"):
        loading.import_candidate(candidate, "kb_test", problem_path=problem)


def test_a_candidate_that_imports_all_it_uses_takes_nothing(tmp_path):
    problem = write(tmp_path, "1_Hardtanh.py", PROBLEM)
    candidate = write(tmp_path, "candidate.py", "import torch\nX = len(torch.__name__)\n")
    assert loading.import_candidate(candidate, "kb_test", problem_path=problem)[1] == []


@pytest.mark.parametrize("source, names, status", [
    (USES_PROBLEM_NAMES, ["hardtanh_max", "hardtanh_min", "to_2tuple"], "passed"),
    (DEFINES_ITS_OWN, ["hardtanh_min", "to_2tuple"], "mismatch"),
], ids=["problem-names", "its-own-wins"])
def test_a_candidate_using_problem_names_is_judged_as_upstream_judges_it(tmp_path, source, names,
                                                                         status):
    level = tmp_path / "level1"
    level.mkdir()
    problem = write(level, "1_Hardtanh.py", PROBLEM)
    result = evaluate(problem, write(tmp_path, "1_Hardtanh.py", source), **FAST)
    assert result["status"] == status, result["error"]
    assert result["outside_names"] == names
    assert any(flag.startswith(f"uses_problem_names: {', '.join(names)}")
               for flag in result["flags"])
