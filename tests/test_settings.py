from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from pytest_kernelbench import Session, SettingsError, api
from pytest_kernelbench.reporting import cli, report
from pytest_kernelbench.reporting.results import RunResults
from pytest_kernelbench.settings import Settings, default_build_cache

PLUGIN = ("-p", "pytest_kernelbench.plugin.hooks")

# (Settings field, a value it cannot take, the same value on the command line)
BAD_VALUES = [
    ("p", -1.0, "--kb-p=-1"),
    ("p", float("nan"), "--kb-p=nan"),
    ("flag_speedup", -2.5, "--kb-flag-speedup=-2.5"),
    ("trials", 0, "--kb-trials=0"),
    ("timeout_s", 0.0, "--kb-timeout=0"),
    ("build_timeout_s", -1.0, "--kb-build-timeout=-1"),
    ("heartbeat_s", -5.0, "--kb-heartbeat=-5"),
    ("atol", -0.1, "--kb-atol=-0.1"),
    ("rtol", -1e-05, "--kb-rtol=-1e-05"),
    ("target_rse", 1.5, "--kb-rse=1.5"),
    ("build_jobs", -2, "--kb-build-jobs=-2"),
    ("baseline_max_age_s", -3600.0, "--kb-baseline-max-age=-1"),
    ("mode", "inference", "--kb-mode=inference"),
    ("timing", "cupti", "--kb-timing=cupti"),
    ("drain", "preempt", "--kb-drain=preempt"),
    ("build_cores", "always", "--kb-build-cores=always"),
    ("baseline", "compile:fast", "--kb-baseline=compile:fast"),
    ("precision", "fp8", "--kb-precision=fp8"),
    ("tolerance", "tight", "--kb-tolerance=tight"),
    ("tf32", "on", "--kb-tf32=on"),
    ("confine", "never", "--kb-confine=never"),
    ("upstream_rules", "v2", "--kb-upstream-rules=v2"),
    ("device", "gpu", "--kb-device=gpu"),
    ("levels", (4,), "--kb-level=4"),
    ("shard", (3, 2), "--kb-shard=3/2"),
    ("summary_cases", -1, "--kb-cases=-1"),
]


def settings(**fields) -> Settings:
    return Settings(Path("problems"), (), **fields)


@pytest.mark.parametrize(("field", "value", "argument"), BAD_VALUES,
                         ids=[argument for _, _, argument in BAD_VALUES])
def test_a_bad_value_is_refused_alike_by_settings_the_api_and_the_command_line(
        pytester, monkeypatch, field, value, argument):
    with pytest.raises(SettingsError) as by_settings:
        settings(**{field: value})
    message = str(by_settings.value)
    assert message.startswith(argument.partition("=")[0] + ": ") and "\n" not in message
    if field in api.OPTIONS or field == "device":
        with pytest.raises(SettingsError) as by_api:
            Session(**{field: value})
        assert str(by_api.value) == message
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    with pytest.raises(pytest.UsageError) as by_plugin:
        pytester.parseconfig(*PLUGIN, argument)
    assert f"error: argument {message}" in str(by_plugin.value).splitlines()[1]


@pytest.mark.parametrize(("options", "message"), [
    ({"p": "2"}, "--kb-p: p must be a number, got '2'"),
    ({"trials": 2.0}, "--kb-trials: expected a whole number, got 2.0"),
    ({"seed": 1.5}, "--kb-seed: seed must be a whole number, got 1.5"),
    ({"order_trials": "off"}, "--kb-order-trials: expected True or False, got 'off'"),
    ({"build_cache": "~/cache"}, "--kb-build-cache: expected a pathlib.Path, got '~/cache'"),
    ({"baseline_max_age_s": "1h"}, "--kb-baseline-max-age: expected hours, got '1h'"),
])
def test_a_value_of_the_wrong_type_is_refused_by_the_api_naming_its_option(options, message):
    with pytest.raises(SettingsError) as refused:
        Session(device="cpu", **options)
    assert str(refused.value) == message


def test_optional_settings_left_unset_and_every_default_are_accepted():
    chosen = settings()
    assert (chosen.atol, chosen.build_jobs, chosen.shard, chosen.build_cache) == (None,) * 4


def test_settings_resolve_the_summary_thresholds_and_the_build_cache_once(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    chosen = settings(p=1.5)
    assert chosen.summary_ps == (0.0, 1.0, 1.5)
    assert chosen.build_cache_root == tmp_path / "xdg" / "pytest-kernelbench" / "extensions"
    assert default_build_cache() == chosen.build_cache_root
    assert settings(build_cache=tmp_path / "mine").build_cache_root == tmp_path / "mine"
    assert dataclasses.replace(chosen, p=3.0).summary_ps == (0.0, 1.0, 3.0)


def test_the_run_summary_and_the_report_read_the_resolved_thresholds(tmp_path):
    chosen = settings(p=2.0)
    object.__setattr__(chosen, "summary_ps", (0.0, 2.5))  # readers must not compute their own
    results = RunResults(chosen, "cpu", {}, 1)
    results.add({"candidate_set": "a", "level": 1, "problem_id": 1, "sample": "s0",
                 "status": "passed", "compiled": True, "correct": True, "speedup": 3.0,
                 "upstream": None}, 2)
    (row,), _ = results.summaries()
    assert sorted(row.fast) == [0.0, 2.5]
    config = report.build_report([], [], chosen, "cpu", {})["config"]
    assert list(config["summary_ps"]) == [0.0, 2.5]
    assert config["build_cache_root"] == str(chosen.build_cache_root)


def test_the_report_tool_summarises_at_the_thresholds_the_run_resolved(tmp_path, capsys):
    record = {"candidate_set": "r1", "level": 1, "problem_id": 1, "sample": "s0",
              "status": "passed", "compiled": True, "correct": True, "speedup": 2.0,
              "error": None}
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"config": {"p": 1.0, "summary_ps": [0.0, 0.5, 1.0]},
                                "results": [record]}))
    assert cli.main(["summary", str(path)]) == 0
    header = next(line for line in capsys.readouterr().out.splitlines() if "fast_" in line)
    assert [cell.strip() for cell in header.split("|") if "fast_" in cell] == \
        ["fast_0", "fast_0.5", "fast_1"]
