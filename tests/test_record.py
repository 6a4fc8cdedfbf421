"""record.py: a new record, and the writers every stage changes records through."""

from __future__ import annotations

import jsonschema

from pytest_kernelbench import record


def fresh() -> record.Record:
    return record.new_record(1, 2, "ReLU", "good", "s0", "good/level1/2_ReLU.py")


def test_a_new_record_holds_every_field_the_schema_requires():
    required = record.schema()["$defs"]["record"].get("required", [])
    made = fresh()
    assert set(required) <= set(made)
    jsonschema.validate(made, {"$defs": record.schema()["$defs"], "$ref": "#/$defs/record"})


def test_flags_charges_and_holds_accumulate_through_the_record_writers():
    made = fresh()
    record.add_flag(made, "first")
    record.add_flag(made, "second")
    record.charge(made, "run", 0.25)
    record.charge(made, "run", 0.5)
    record.charge(made, "rounds", 1.0, "timing_phases")
    record.mark_held(made, "compile", [1.0, 2.0])
    record.mark_held(made, "correct", [2.0, 3.0])
    assert made["flags"] == ["first", "second"] and record.has_flag(made, "second")
    assert made["harness_s"] == {"run": 0.75} and made["timing_phases"] == {"rounds": 1.0}
    assert made["held"] == {"compile": [1.0, 2.0], "correct": [2.0, 3.0]}
    record.replace_flags(made, ["first"], "third")
    assert made["flags"] == ["second", "third"]
