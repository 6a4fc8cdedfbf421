"""The Python API: the same evaluation core as the pytest items, without pytest."""

from __future__ import annotations

from pathlib import Path

import jsonschema
import pytest

from pytest_kernelbench import Session, evaluate, record

EXAMPLES = Path(__file__).parent / "examples"
RELU = EXAMPLES / "problems" / "level1" / "2_ReLU.py"
GOOD = EXAMPLES / "candidates" / "good" / "level1" / "2_ReLU.py"
WRONG = EXAMPLES / "candidates" / "broken" / "level1" / "2_ReLU" / "wrong_values.py"
FAST = {"device": "cpu", "trials": 2, "time_budget_s": 0.05, "p": 0.0}


def valid(one: dict) -> dict:
    jsonschema.validate(one, {"$defs": record.schema()["$defs"], "$ref": "#/$defs/record"})
    return one


def test_evaluate_judges_files_as_the_plugin_does():
    result = valid(evaluate(RELU, GOOD, **FAST))
    assert (result["level"], result["problem_id"], result["problem"]) == (1, 2, "ReLU")
    assert result["compiled"] and result["correct"] and result["status"] == "passed"
    assert result["speedup"] > 0 and result["upstream"]["correct"] is True


def test_sources_are_accepted_and_a_wrong_candidate_says_where():
    result = valid(evaluate(RELU.read_text(), WRONG.read_text(), **FAST))
    assert result["level"] == 0 and result["status"] == "mismatch"
    assert "trial 0" in result["error"] and "differ" in result["error"]


def test_a_session_judges_each_attempt_as_it_was_when_called(tmp_path):
    attempt = tmp_path / "attempt.py"
    with Session(**FAST) as session:
        attempt.write_text(WRONG.read_text())
        first = session.evaluate(RELU, attempt)
        attempt.write_text(GOOD.read_text())
        second = session.evaluate(RELU, attempt)
    assert first["status"] == "mismatch" and second["status"] == "passed"
    assert first["sample"] != second["sample"]


def test_bad_arguments_are_named():
    with pytest.raises(TypeError, match="unknown option.*trails"):
        Session(device="cpu", trails=3)
    with pytest.raises(ValueError, match="unknown device"):
        Session(device="tpu")
    with pytest.raises(FileNotFoundError, match="no such file: nowhere.py"):
        evaluate(RELU, "nowhere.py", **FAST)
