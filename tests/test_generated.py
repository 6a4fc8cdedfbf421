"""The built-in candidate sets: made from the problems, cached by content, judged like folders."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest
import torch

from pytest_kernelbench.building import builds
from pytest_kernelbench.suite import generated
from pytest_kernelbench.suite.loading import import_file

ROOT = Path(__file__).resolve().parents[1]
PROBLEMS = ROOT / "problems"
EXAMPLES = Path(__file__).parent / "examples"
SOME_PROBLEMS = ["level1/19_ReLU.py", "level2/12_Gemm_Multiply_LeakyReLU.py",
                 "level3/1_MLP.py"]


def imports_of(source: str) -> list[str]:
    return [ast.unparse(node) for node in ast.parse(source).body
            if isinstance(node, ast.Import | ast.ImportFrom)]


def load_candidate(tmp_path: Path, set_name: str, relative: str, problems: Path = PROBLEMS):
    text = generated.SETS[set_name]((problems / relative).read_text(), relative)
    path = tmp_path / f"{set_name}_{Path(relative).name}"
    path.write_text(text)
    return text, import_file(path, f"kb_generated_{set_name}")


# The epilogue sets build an extension at import: read, not imported, here.
BUILDING_SETS = ["cuda_epilogue", "cpp_epilogue"]
IMPORTABLE_SETS = sorted(set(generated.SETS) - set(BUILDING_SETS))


@pytest.mark.parametrize("set_name", IMPORTABLE_SETS)
@pytest.mark.parametrize("relative", SOME_PROBLEMS)
def test_a_generated_candidate_keeps_the_problems_imports_and_constructor(tmp_path, set_name,
                                                                          relative):
    problem_source = (PROBLEMS / relative).read_text()
    problem = import_file(PROBLEMS / relative, "kb_generated_problem")
    text, candidate = load_candidate(tmp_path, set_name, relative)
    assert imports_of(text) == imports_of(problem_source)
    assert isinstance(candidate.ModelNew, type) and issubclass(candidate.ModelNew, torch.nn.Module)
    constructor = inspect.signature(candidate.ModelNew.__init__)
    if set_name == "reference":
        assert constructor == inspect.signature(problem.Model.__init__)
    else:  # whatever Model takes, passed on as given
        assert [p.kind for p in constructor.parameters.values()][1:] == [
            inspect.Parameter.VAR_POSITIONAL]


def test_a_reference_candidate_draws_the_same_weights_and_answers_alike(tmp_path):
    relative = "level2/1_Linear_ReLU.py"
    problem = import_file(EXAMPLES / "problems" / relative, "kb_generated_problem")
    _, candidate = load_candidate(tmp_path, "reference", relative, EXAMPLES / "problems")
    torch.manual_seed(0)
    reference = problem.Model(*problem.get_init_inputs())
    torch.manual_seed(0)
    renamed = candidate.ModelNew(*problem.get_init_inputs())
    inputs = problem.get_inputs()
    with torch.no_grad():
        assert torch.equal(reference(*inputs), renamed(*inputs))


def copy_problems(to: Path) -> Path:
    for path in (EXAMPLES / "problems").glob("level*/*.py"):
        target = to / path.relative_to(EXAMPLES / "problems")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(path.read_bytes())
    return to


def test_a_cached_set_is_reused_until_a_problem_changes(tmp_path):
    problems = copy_problems(tmp_path / "problems")
    first = generated.cached_set(problems, "reference", tmp_path / "cache")
    assert first.name == "reference"
    assert sorted(p.relative_to(first) for p in first.rglob("*.py")) == \
        sorted(p.relative_to(problems) for p in problems.rglob("*.py"))
    marker = first / "level1" / "2_ReLU.py"
    written_ns = marker.stat().st_mtime_ns
    assert generated.cached_set(problems, "reference", tmp_path / "cache") == first
    assert marker.stat().st_mtime_ns == written_ns
    relu = problems / "level1" / "2_ReLU.py"
    relu.write_text(relu.read_text().replace("32, 48", "32, 64"))
    second = generated.cached_set(problems, "reference", tmp_path / "cache")
    assert second != first and second.name == "reference"
    assert "32, 64" in (second / "level1" / "2_ReLU.py").read_text()


@pytest.mark.parametrize("set_name", BUILDING_SETS)
def test_a_build_heavy_set_has_a_distinct_extension_for_every_problem(set_name):
    files = generated.set_files(PROBLEMS, set_name)
    assert len(files) == len(generated.problem_files(PROBLEMS)) == 250
    assert len(set(files.values())) == 250  # no two candidates share a build
    cuda = set_name == "cuda_epilogue"
    kernels = set()
    for relative, text in files.items():
        # the C++ set builds on a CPU run too; the CUDA set only on a GPU
        assert builds.needs_build(text) and builds.needs_cuda(text) == cuda, relative
        tree = ast.parse(text)
        classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
        assert [ast.unparse(base) for base in classes["ModelNew"].bases] == ["Model"]
        problem_source = (PROBLEMS / relative).read_text()
        assert imports_of(text)[:len(imports_of(problem_source))] == imports_of(problem_source)
        (name,) = {kw.value.value for node in ast.walk(tree) if isinstance(node, ast.Call)
                   and getattr(node.func, "id", "") == "load_inline"
                   for kw in node.keywords if kw.arg == "name"}
        assert name.isidentifier()
        assert (f"__global__ void {name}(" in text) == cuda
        kernels.add(name)
    assert len(kernels) == 250


def test_the_command_writes_every_set_into_a_folder(tmp_path):
    import runpy

    tool = runpy.run_path(str(ROOT / "tools" / "make_candidate_sets.py"))
    assert tool["main"]([str(tmp_path), "--problems", str(EXAMPLES / "problems")]) == 0
    for name in generated.SETS:
        written = {p.relative_to(tmp_path / name): p.read_text()
                   for p in (tmp_path / name).rglob("*.py")}
        assert written == generated.set_files(EXAMPLES / "problems", name)


@pytest.fixture
def kb_cached(kb, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(kb.pytester.path / "cache"))
    return kb


def test_a_builtin_reference_set_passes_correctness_under_its_own_name(kb_cached):
    result = kb_cached.run(args=("--kb-candidates=builtin:reference", "--kb-trials=1",
                                 "-m", "kb_compile or kb_correct", "-v"))
    result.assert_outcomes(passed=8)
    result.stdout.fnmatch_lines(["*level1/2_ReLU::test_correct[[]reference-s0[]] PASSED*"])
    records = kb_cached.records()
    assert {key[0] for key in records} == {"reference"}
    assert all(r["correct"] for r in records.values()), records
    cached = kb_cached.pytester.path / "cache" / "pytest-kernelbench" / "candidate-sets"
    assert all(Path(r["candidate_path"]).is_relative_to(cached) for r in records.values())


@pytest.mark.parametrize(("sets", "message"), [
    (("builtin:fastest",), "*--kb-candidates: no built-in candidate set 'fastest'; the built-in "
                           "sets are builtin:reference, builtin:torch_compile, builtin:cuda_epilogue, "
                           "builtin:cpp_epilogue"),
    (("builtin:reference", "reference"), "*--kb-candidates: two sets share a folder name*"),
])
def test_builtin_set_mistakes_are_one_line_usage_errors(kb_cached, sets, message):
    kb_cached.pytester.mkdir("reference")
    result = kb_cached.run(args=tuple(f"--kb-candidates={s}" for s in sets))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert "Traceback" not in result.stderr.str()
