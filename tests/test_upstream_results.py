"""Upstream KernelBench's own eval_results.json, read by kernelbench-report as records."""

from __future__ import annotations

import json

import jsonschema
import pytest

from pytest_kernelbench import record
from pytest_kernelbench.reporting import cli, upstream_results

# The layout upstream's eval_from_generations.py writes (problem id -> samples), and the
# eager timing file its analysis divides by (level -> problem file -> mean in ms).
EVAL_RESULTS = {
    "1": [{"sample_id": 0, "compiled": True, "correctness": True, "runtime": 0.5,
           "metadata": {}, "runtime_stats": {}},
          {"sample_id": 1, "compiled": True, "correctness": True, "runtime": 4.0,
           "metadata": {}, "runtime_stats": {}}],
    "2": [{"sample_id": 0, "compiled": True, "correctness": False, "runtime": -1.0,
           "metadata": {"runtime_error": "CUDA error: an illegal memory access"}}],
    "3": [{"sample_id": 0, "compiled": False, "correctness": False, "runtime": -1.0,
           "metadata": {"compilation_error": "nvcc failed"}}],
}
BASELINE = {"level1": {
    "1_Square_matrix_multiplication_.py": {"mean": 2.0, "std": 0.01},
    "2_Standard_matrix_multiplication_.py": {"mean": 2.0},
    "3_Batched_matrix_multiplication.py": {"mean": 3.0},
    "4_Matrix_vector_multiplication_.py": {"mean": 1.0},
}}


def test_each_sample_becomes_a_record_and_every_listed_problem_counts():
    records = upstream_results.records_from_eval_results(EVAL_RESULTS, 1, "r1 (upstream)",
                                                         BASELINE)
    by = {(r["problem_id"], r["sample"]): r for r in records}
    assert by[(1, "s0")]["status"] == "passed" and by[(1, "s0")]["speedup"] == pytest.approx(4.0)
    assert by[(1, "s1")]["status"] == "slower" and by[(1, "s1")]["speedup"] == pytest.approx(0.5)
    assert by[(2, "s0")]["status"] == "runtime_error" and "illegal" in by[(2, "s0")]["error"]
    assert by[(3, "s0")]["status"] == "compile_error" and not by[(3, "s0")]["compiled"]
    assert by[(4, "s0")]["status"] == "missing"  # in the timing file, not in the results
    assert by[(1, "s0")]["problem"] == "Square_matrix_multiplication_"
    schema = record.schema()
    for one in records:
        jsonschema.validate(one, {**schema["$defs"]["record"], "$defs": schema["$defs"]})


def test_the_report_tool_scores_an_upstream_file_beside_its_own_reports(tmp_path, capsys):
    run = tmp_path / "runs" / "r1"
    run.mkdir(parents=True)
    (run / "eval_results.json").write_text(json.dumps(EVAL_RESULTS))
    (tmp_path / "baseline.json").write_text(json.dumps(BASELINE))
    assert cli.main(["summary", str(run / "eval_results.json"), "--upstream-level", "1",
                     "--upstream-baseline", str(tmp_path / "baseline.json"), "--p", "1"]) == 0
    table = capsys.readouterr().out
    row = next(line for line in table.splitlines() if "r1 (upstream)" in line)
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    # 4 problems, 1 correct and faster than 1 (problem 1's best sample): fast_1 = 0.25
    assert cells[2] == "4" and "0.250" in cells


def test_an_upstream_file_without_its_level_is_refused_with_what_to_give(tmp_path, capsys):
    path = tmp_path / "eval_results.json"
    path.write_text(json.dumps(EVAL_RESULTS))
    assert cli.main(["summary", str(path)]) == 2
    assert "give --upstream-level" in capsys.readouterr().err


def test_a_report_that_is_not_json_is_named_in_the_error(tmp_path, capsys):
    path = tmp_path / "broken.json"
    path.write_text("{not json")
    assert cli.main(["summary", str(path)]) == 2
    assert str(path) in capsys.readouterr().err
