"""suite/scan.py: the static look at a candidate's source, reported as information."""

from __future__ import annotations

import pytest

from pytest_kernelbench.suite.scan import SUSPICIOUS, scan_source


def test_the_static_scan_names_suspicious_constructs_with_their_line():
    source = "import torch\nimport time\n\ntime.perf_counter = lambda: 0\ns = torch.cuda.Stream()\n"
    notes = scan_source(source)
    assert "line 4: assigns to an attribute of torch/time/sys/os (monkeypatching)" in notes
    assert "line 5: creates CUDA streams (work may escape timing)" in notes
    assert scan_source("import torch\n\ndef f(x):\n    return torch.relu(x)\n") == []



@pytest.mark.parametrize("source, note", [
    ("import threading\n", "starts threads"),
    ("import subprocess\n", "starts processes"),
    ("g = torch.cuda.CUDAGraph()\n", "captures CUDA graphs"),
    ("p = x.data_ptr()\n", "reads tensor pointers"),
    ("try:\n    y = f()\nexcept Exception:\n    pass\n", "swallows exceptions"),
    ("import os\nos._exit(0)\n", "can end the process"),
])
def test_each_kind_of_construct_is_named(source, note):
    [found] = [line for line in scan_source(source) if note in line]
    assert found.startswith("line ")


def test_each_kind_is_named_once_at_its_first_line():
    notes = scan_source("import ctypes\nimport ctypes\nctypes.CDLL('x')\n")
    assert notes == ["line 1: uses ctypes"]
    assert len(scan_source("".join(f"# {i}\n" for i in range(3)))) == 0
    assert len({text for _, text in SUSPICIOUS}) == len(SUSPICIOUS)
