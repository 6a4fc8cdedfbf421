"""The shipped suite: every problem loads, has its manifest entry, and matches the upstream facts
(names, init arguments, parameter layout, input and output shapes) unless CHANGES.md lists it."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest
import torch
import yaml

from pytest_kernelbench.suite import generated
from pytest_kernelbench.suite.discovery import find_problems
from pytest_kernelbench.suite.loading import import_file
from pytest_kernelbench.suite.manifest import load_manifest

ROOT = Path(__file__).resolve().parents[1]
PROBLEMS = ROOT / "problems"
FACTS = Path(__file__).parent / "data" / "upstream_facts.yaml"
SUITE = find_problems(PROBLEMS)
MANIFEST = load_manifest(PROBLEMS)
RAW_MANIFEST = {(e["level"], e["id"]): e
                for e in yaml.safe_load((PROBLEMS / "manifest.yaml").read_text())}


@functools.cache
def read_facts() -> dict[tuple[int, int], dict]:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C loader is ten times faster
    return {(e["level"], e["id"]): e for e in yaml.load(FACTS.read_text(), Loader=loader)}


def load_facts() -> dict[tuple[int, int], dict]:
    if not FACTS.is_file():
        pytest.skip(f"upstream facts not found at {FACTS}")
    return read_facts()


def plain(value):
    """Tuples as lists, as the facts file writes them."""
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def shapes(value):
    if isinstance(value, torch.Tensor):
        return list(value.shape)
    if isinstance(value, (list, tuple)):
        return [shapes(v) for v in value]
    return value


def test_the_suite_has_all_250_problems():
    counts = {level: sum(p.level == level for p in SUITE) for level in (1, 2, 3)}
    assert counts == {1: 100, 2: 100, 3: 50}


def test_every_problem_has_a_manifest_entry_with_tags():
    assert {(p.level, p.problem_id) for p in SUITE} == set(RAW_MANIFEST)
    untagged = [key for key, entry in MANIFEST.items() if not entry.tags]
    assert untagged == []


def test_changes_md_names_every_changed_problem():
    changes = (PROBLEMS / "CHANGES.md").read_text()
    changed = [key for key, entry in RAW_MANIFEST.items() if entry.get("changed")]
    assert changed, "the suite documents its deviations from upstream"
    missing = [f"L{level}/{pid}" for level, pid in changed if f"**L{level}/{pid}**" not in changes]
    assert missing == []


@pytest.mark.parametrize("problem", SUITE, ids=[p.key for p in SUITE])
def test_problem_matches_the_upstream_facts(problem):
    facts = load_facts()[(problem.level, problem.problem_id)]
    assert problem.path.name == facts["file"]
    module = import_file(problem.path, "kb_suite_check")
    for name in ("Model", "get_inputs", "get_init_inputs"):
        assert hasattr(module, name), name
    changed = RAW_MANIFEST[(problem.level, problem.problem_id)].get("changed", False)
    # On the meta device nothing is allocated, but recurrent layers unroll there step by step
    # (6-12 s a problem); their workloads are small enough to run on the CPU in a fraction.
    tags = RAW_MANIFEST[(problem.level, problem.problem_id)].get("tags", [])
    recurrent = "lstm" in tags or "gru" in tags
    with torch.device("cpu" if recurrent else "meta"):
        init_args = list(module.get_init_inputs())
        model = module.Model(*init_args)
        inputs = list(module.get_inputs())
        with torch.no_grad():
            output = model(*inputs)
    layout = [[name, list(p.shape)] for name, p in model.named_parameters()]
    if not changed:
        assert plain(init_args) == plain(facts["init_args"])
        assert [shapes(x) if isinstance(x, torch.Tensor) else x for x in inputs] == \
            [x["shape"] if isinstance(x, dict) else x for x in facts["inputs"]]
        expected_out = facts["output"]
        got_out = shapes(output)
        if isinstance(expected_out, dict):
            assert got_out == expected_out["shape"]
        assert sorted(map(str, layout)) == sorted(map(str, facts["params"]["layout"]))
    else:
        # A documented change may resize the workload, never rename or drop parameters.
        assert [name for name, _ in layout] == [name for name, _ in facts["params"]["layout"]] \
            or sorted(n for n, _ in layout) == sorted(n for n, _ in facts["params"]["layout"])


@pytest.mark.parametrize("set_name", sorted(generated.SETS))
def test_every_shipped_problem_makes_a_candidate_of_each_generated_set(set_name):
    files = generated.set_files(PROBLEMS, set_name)
    assert sorted(files) == sorted(path.relative_to(PROBLEMS) for path in PROBLEMS.glob("level*/*.py"))
    for relative, text in files.items():
        classes = {node.name for node in ast.parse(text).body if isinstance(node, ast.ClassDef)}
        assert "ModelNew" in classes, relative


def test_a_torch_compile_candidate_draws_the_references_weights_and_answers_alike(monkeypatch,
                                                                                  tmp_path):
    # The compiled set wraps the problem's own Model; compiling itself is not exercised here
    # (it takes a C++ toolchain and tens of seconds per problem on a CPU): torch.compile is
    # the identity for this test.
    monkeypatch.setattr(torch, "compile", lambda module, **options: module)
    problem_path = PROBLEMS / "level2" / "12_Gemm_Multiply_LeakyReLU.py"
    problem = import_file(problem_path, "kb_p")
    candidate_path = tmp_path / problem_path.name
    candidate_path.write_text(generated.compile_source(problem_path.read_text(), problem_path.name))
    candidate = import_file(candidate_path, "kb_c")
    torch.manual_seed(0)
    reference = problem.Model(*problem.get_init_inputs())
    torch.manual_seed(0)
    wrapped = candidate.ModelNew(*problem.get_init_inputs())
    inputs = problem.get_inputs()
    with torch.no_grad():
        assert torch.equal(reference(*inputs), wrapped(*inputs))
