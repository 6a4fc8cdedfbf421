"""tools/layers.py: the package's imports point down its layers, with no cycle."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOOL = ROOT / "tools" / "layers.py"


def _load_tool():
    spec = importlib.util.spec_from_file_location("layers_tool", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while being made
    spec.loader.exec_module(module)
    return module


layers = _load_tool()


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    package = tmp_path / "pytest_kernelbench"
    for name, source in {"__init__.py": "", **files}.items():
        path = package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)
    return package


def _check(package: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = layers.main([str(package)])
    return code, capsys.readouterr().out


CLEAN = {
    "faults.py": "PASSED = 'passed'\n",
    "gpu/__init__.py": "",
    "gpu/timing.py": "from pytest_kernelbench import faults\n\n\ndef time_it():\n"
                     "    import torch\n\n    return torch, faults.PASSED\n",
    "judge/__init__.py": "",
    "judge/evaluation.py": "from pytest_kernelbench.gpu import timing\n",
    "plugin/__init__.py": "",
    "plugin/hooks.py": "import pytest\n\nfrom pytest_kernelbench.judge import evaluation\n",
}


def test_a_tree_whose_imports_point_down_passes(tmp_path, capsys):
    code, out = _check(_package(tmp_path, CLEAN), capsys)
    assert code == 0, out
    assert "gpu" in out and "timing" in out


def test_a_cycle_hidden_in_a_function_fails(tmp_path, capsys):
    files = {**CLEAN, "gpu/kernels.py": "def names():\n    from pytest_kernelbench.gpu import cupti\n",
             "gpu/cupti.py": "from pytest_kernelbench.gpu import kernels\n"}
    code, out = _check(_package(tmp_path, files), capsys)
    assert code == 1
    assert "import cycle: pytest_kernelbench.gpu.cupti <-> pytest_kernelbench.gpu.kernels" in out
    assert "gpu/kernels.py:2: function-local import of pytest_kernelbench.gpu.cupti" in out


def test_an_upward_import_fails(tmp_path, capsys):
    files = {**CLEAN, "gpu/timing.py": "from pytest_kernelbench.judge import evaluation\n",
             "judge/evaluation.py": ""}
    code, out = _check(_package(tmp_path, files), capsys)
    assert code == 1
    assert "gpu/timing.py:1: gpu imports judge (upward)" in out
    assert "import cycle" not in out


def test_the_api_may_not_import_the_plugin(tmp_path, capsys):
    files = {**CLEAN, "api.py": "from pytest_kernelbench.plugin import hooks\n"}
    code, out = _check(_package(tmp_path, files), capsys)
    assert code == 1
    assert "api imports plugin (sideways)" in out


def test_pytest_outside_the_plugin_fails_even_inside_a_function(tmp_path, capsys):
    files = {**CLEAN, "judge/evaluation.py": "def fail():\n    import pytest\n\n    pytest.fail()\n"}
    code, out = _check(_package(tmp_path, files), capsys)
    assert code == 1
    assert "judge/evaluation.py:2: imports pytest outside plugin/" in out


def test_a_relative_import_is_read_as_the_module_it_names(tmp_path, capsys):
    files = {**CLEAN, "gpu/timing.py": "from ..judge import evaluation\n", "judge/evaluation.py": ""}
    code, out = _check(_package(tmp_path, files), capsys)
    assert code == 1
    assert "gpu imports judge (upward): pytest_kernelbench.judge.evaluation" in out


def test_a_module_outside_the_table_fails(tmp_path, capsys):
    code, out = _check(_package(tmp_path, {**CLEAN, "helpers.py": ""}), capsys)
    assert code == 1
    assert "helpers.py: in no layer of the table" in out


def test_the_package_keeps_its_layers():
    done = subprocess.run([sys.executable, str(TOOL)], capture_output=True, text=True, cwd=ROOT,
                          timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no cycles" in done.stdout


def test_the_api_loads_neither_pytest_nor_the_plugin():
    probe = ("import sys, pytest_kernelbench\n"
             "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pytest', '_pytest')"
             " or m.startswith('pytest_kernelbench.plugin')))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT),
                                                                     os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_every_subpackage_ships_in_the_wheel():
    # pyproject.toml lists the packages a wheel holds: one left out imports from a checkout
    # and fails wherever the plugin is installed from a wheel.
    tomllib = pytest.importorskip("tomllib")  # Python 3.11 on
    root = ROOT
    listed = set(tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]
                 ["packages"])
    found = {"pytest_kernelbench." + init.parent.name
             for init in (root / "pytest_kernelbench").glob("*/__init__.py")}
    assert found - listed == set()
