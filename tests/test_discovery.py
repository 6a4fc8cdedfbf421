from __future__ import annotations

from pathlib import Path

import pytest

from pytest_kernelbench.suite import discovery

EXAMPLES = Path(__file__).parent / "examples"


def touch(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("")
    return path


def test_problems_are_found_by_level_and_id():
    problems = discovery.find_problems(EXAMPLES / "problems")
    assert [(p.level, p.problem_id, p.name) for p in problems] == [
        (1, 1, "Scale"), (1, 2, "ReLU"), (1, 3, "WideSoftmax"), (2, 1, "Linear_ReLU")]
    assert problems[1].key == "level1/2_ReLU"


def test_levels_filter_problems():
    problems = discovery.find_problems(EXAMPLES / "problems", levels=[2])
    assert [p.key for p in problems] == ["level2/1_Linear_ReLU"]


def test_a_folder_without_levels_is_an_error(tmp_path):
    with pytest.raises(discovery.DiscoveryError, match="no level<N>/ folders"):
        discovery.find_problems(tmp_path)


def test_upstream_generated_runs_are_read_with_their_samples():
    found = discovery.find_candidates(EXAMPLES / "candidates" / "upstream_run")
    assert [(c.level, c.problem_id, c.sample) for c in found] == [
        (1, 1, "s0"), (1, 1, "s1"), (1, 2, "s0")]
    assert {c.set_name for c in found} == {"upstream_run"}


def test_own_layout_accepts_files_by_id_and_sample_folders(tmp_path):
    touch(tmp_path / "level1" / "19_ReLU.py")
    touch(tmp_path / "level2" / "7.py")
    touch(tmp_path / "level3" / "5_AlexNet" / "fast.py")
    touch(tmp_path / "level3" / "5_AlexNet" / "safe.py")
    touch(tmp_path / "level1" / "notes.md")
    found = discovery.find_candidates(tmp_path)
    assert [(c.level, c.problem_id, c.sample) for c in found] == [
        (1, 19, "s0"), (2, 7, "s0"), (3, 5, "fast"), (3, 5, "safe")]


def test_two_files_for_one_sample_are_an_error(tmp_path):
    touch(tmp_path / "level1" / "19_ReLU.py")
    touch(tmp_path / "level_1_problem_19_sample_0_kernel.py")
    with pytest.raises(discovery.DiscoveryError, match="two files for level 1 problem 19"):
        discovery.find_candidates(tmp_path)


def test_pairing_gives_missing_problems_an_empty_case():
    problems = discovery.find_problems(EXAMPLES / "problems")
    sets = {"run": discovery.find_candidates(EXAMPLES / "candidates" / "upstream_run")}
    cases = discovery.pair(problems, sets)
    assert [(c.problem.problem_id, c.problem.level, c.id) for c in cases] == [
        (1, 1, "run-s0"), (1, 1, "run-s1"), (2, 1, "run-s0"), (3, 1, "run-missing"),
        (1, 2, "run-missing")]
    assert cases[-1].candidate is None


def test_every_file_of_a_set_that_matches_no_problem_is_found(tmp_path):
    found = [touch(tmp_path / "mine" / name) for name in (
        "level1/2_ReLU.py", "level1/42_Typo.py", "level4/1_X.py", "level1/ReLU.py",
        "level1/__init__.py", "level1/__pycache__/2_ReLU.cpython-311.py",
        "level_1_problem_3_sample_0_kernel.py")]
    candidates = discovery.find_candidates(found[0].parents[1])
    known = discovery.problem_keys(EXAMPLES / "problems")
    assert known == {(1, 1), (1, 2), (1, 3), (2, 1)}
    unmatched = discovery.unmatched(found[0].parents[1], candidates, known)
    assert [(u.shown, u.why) for u in unmatched] == [
        ("mine/level1/42_Typo.py", "no problem 42 in level1/"),
        ("mine/level1/ReLU.py", "its name or folder gives no level and id"),
        ("mine/level4/1_X.py", "no level4/ among the problems")]
    assert unmatched[0].path == found[1]
