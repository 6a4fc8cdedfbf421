from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from pytest_kernelbench import settings as options

EXAMPLES = Path(__file__).parent / "examples"


@pytest.mark.parametrize(("text", "expected"), [
    ("1", (1,)), ("1,2", (1, 2)), ("3,1,3", (1, 3)), (" 2 ", (2,)),
])
def test_levels_parse_to_sorted_tuples(text, expected):
    assert options.parse_levels(text) == expected


@pytest.mark.parametrize("text", ["0", "4", "one", "1,,2", ""])
def test_unknown_levels_are_rejected(text):
    with pytest.raises(argparse.ArgumentTypeError, match="unknown level"):
        options.parse_levels(text)


@pytest.mark.parametrize(("parse", "text", "message"), [
    (options.parse_p, "-1", "p must be >= 0"),
    (options.parse_p, "fast", "p must be a number"),
    (options.parse_tolerance, "-0.1", "tolerance must be >= 0"),
    (options.parse_positive_int, "0", ">= 1"),
    (options.parse_seconds, "0", "seconds > 0"),
    (options.parse_device, "gpu", "unknown device"),
    (options.parse_mode, "inference", "mode must be"),
    (options.parse_timing, "cupti", "timing must be events, graph or auto"),
    (options.parse_drain, "preempt", "drain must be wait or stop"),
    (options.parse_baseline, "compile:fastest", "unknown baseline"),
    (options.parse_baseline, "jit", "unknown baseline"),
    (options.parse_fraction, "1.5", "expected a fraction"),
    (options.parse_jobs, "-2", ">= 0"),
    (options.parse_hours, "soon", "expected hours"),
    (options.parse_cases, "-1", "expected a number >= 0 or all, got -1"),
    (options.parse_cases, "most", "expected a number >= 0 or all, got 'most'"),
])
def test_bad_values_get_a_message_a_person_can_act_on(parse, text, message):
    with pytest.raises(argparse.ArgumentTypeError, match=message):
        parse(text)


@pytest.mark.parametrize(("text", "field"), [("0", 0), ("12", 12), ("all", None), (" ALL ", None)])
def test_the_case_count_takes_a_number_or_all(text, field):
    [option] = [option for option in options.OPTIONS if option.flag == "--kb-cases"]
    assert option.to_field(option.parse(text)) == field
    assert option.check(field) == field


@pytest.mark.parametrize("text", ["auto", "cpu", "cuda", "cuda:1"])
def test_known_devices_parse(text):
    assert options.parse_device(text) == text


def test_help_lists_every_option(kb):
    result = kb.pytester.runpytest(*kb.plugin_args, "--help")
    text = result.stdout.str()
    assert "KernelBench kernel evaluation:" in text
    for name in ["--kb-candidates=DIR", "--kb-problems=DIR", "--kb-level=N[,N]", "--kb-p=P",
                 "--kb-trials=N", "--kb-atol=X", "--kb-rtol=X", "--kb-device=DEV",
                 "--kb-mode=MODE", "--kb-timeout=SECONDS", "--kb-report=PATH",
                 "--kb-tags=TAG[,TAG]", "--kb-seed=N", "--kb-timing=HOW", "--kb-drain=HOW",
                 "--kb-build-cores=HOW", "--kb-rse=X",
                 "--kb-baseline=B", "--kb-baseline-cache=DIR", "--kb-baseline-max-age=HOURS",
                 "--kb-retime-baseline", "--kb-build-jobs=N", "--kb-build-cache=DIR",
                 "--kb-build-headers=on|off", "--kb-costs=REPORT", "--kb-upstream-rules=VERSION"]:
        assert name in text


@pytest.mark.parametrize(("args", "message"), [
    (["--kb-level=4"], "*--kb-level: unknown level '4'*"),
    (["--kb-p=-1"], "*--kb-p: p must be >= 0*"),
    (["--kb-problems=no/such/folder"], "*--kb-problems: no such folder: no/such/folder*"),
    (["--kb-candidates=no/such/set"], "*--kb-candidates: no such folder: no/such/set*"),
    (["--kb-timing=cupti"], "*--kb-timing: timing must be events, graph or auto*"),
    (["--kb-drain=preempt"], "*--kb-drain: drain must be wait or stop*"),
    (["--kb-build-cores=always"], "*--kb-build-cores: build cores must be pause or split*"),
    (["--kb-build-cores=split", "--kb-device=cpu"],
     "*--kb-build-cores=split: the device is cpu, and a timing on the CPU needs every core*"),
    (["--kb-baseline=compile:fast"], "*--kb-baseline: unknown baseline 'compile:fast'*"),
    (["--kb-costs=no/such.json"], "*--kb-costs: no such file: no/such.json*"),
    (["--kb-upstream-rules=v2"], "*--kb-upstream-rules: upstream rules must be v0 or main*"),
    (["--kb-build-headers=maybe"], "*--kb-build-headers: must be on or off, got 'maybe'*"),
    (["--kb-cases=some"], "*--kb-cases: expected a number >= 0 or all, got 'some'*"),
])
def test_bad_options_are_one_line_usage_errors(kb, args, message):
    result = kb.run("good", args=tuple(args))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert "Traceback" not in result.stderr.str()


def test_without_candidates_the_plugin_stays_idle(kb):
    kb.pytester.makepyfile("def test_plain():\n    assert 1 + 1 == 2\n")
    result = kb.pytester.runpytest(*kb.plugin_args)
    result.assert_outcomes(passed=1)
    assert "kernelbench" not in result.stdout.str()


def test_without_a_problems_folder_the_suite_that_ships_is_used(pytester, monkeypatch):
    # No ini and no ./problems here: the plugin's own 250 problems are the default.
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    candidates = pytester.mkdir("mine")
    (candidates / "level1").mkdir()
    (candidates / "level1" / "19_ReLU.py").write_text("class ModelNew: pass\n")
    result = pytester.runpytest("-p", "pytest_kernelbench.plugin.hooks", "-p", "no:cacheprovider",
                                f"--kb-candidates={candidates}", "--collect-only", "-q",
                                "--kb-level=1", "-k", "19_ReLU")
    result.stdout.fnmatch_lines(["level1/19_ReLU::test_compile[[]mine-s0[]]"])


def test_every_option_has_its_default_written_once_and_shown_in_readme():
    readme = (Path(__file__).parents[1] / "README.md").read_text()
    for option in options.OPTIONS:
        rows = [line for line in readme.splitlines() if line.startswith("| `")
                and (f"`{option.flag}=" in line.split("|")[1] or f"`{option.flag}`" in line.split("|")[1])]
        assert rows, f"README's options table has no row for {option.flag}"
        first_cell = rows[0].split("|")[1]
        if first_cell.count("--kb-") == 1:  # a row of its own: its default cell is the default
            shown = rows[0].split("|")[2].strip().strip("`")
            assert shown == option.shown(option.default), (option.flag, shown)


def test_ini_twins_set_what_the_flags_set(kb):
    kb.pytester.makeini("[pytest]\nkb_trials = 2\nkb_allow_input_changes = true\n"
                        "kb_upstream_rules = main\nkb_level = 1\nkb_cases = all\n")
    result = kb.run("good", args=("-k", "ReLU", "--kb-p=0"))
    config = kb.report()["config"]
    assert (config["trials"], config["allow_input_changes"], config["upstream_rules"],
            config["levels"], config["summary_cases"]) == (2, True, "main", [1], None), \
        result.stdout.str()[-400:]


def test_a_bad_ini_value_names_the_ini_option(kb):
    kb.pytester.makeini("[pytest]\nkb_trials = none\n")
    result = kb.run("good")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*ini option kb_trials: expected a whole number, got 'none'*"])


@pytest.mark.parametrize(("setting", "told"), [("on", True), ("off", False)])
def test_the_header_setting_reaches_the_build_process_and_the_worker(kb, setting, told):
    candidates = kb.pytester.mkdir("headers") / "level1"
    candidates.mkdir()
    (candidates / "2_ReLU.py").write_text(
        "# load_inline (its build process and its item's worker import it, each in its build\n"
        "# folder, and each writes down the header root it was told and whether it may read it)\n"
        "import os\nimport torch\n\n"
        "root = os.environ.get('KB_PCH_ROOT')\n"
        "try:\n    readable = root is not None and os.listdir(root) is not None\n"
        "except OSError:\n    readable = False\n"
        "with open('told.txt', 'a') as told:\n    told.write(f'{root} {readable}\\n')\n\n"
        "class ModelNew(torch.nn.Module):\n    def forward(self, x):\n"
        "        return torch.relu(x)\n")
    result = kb.pytester.runpytest(
        *kb.plugin_args, f"--kb-problems={EXAMPLES / 'problems'}", f"--kb-candidates={candidates.parent}",
        "--kb-level=1", "-k", "2_ReLU", "-m", "kb_compile", "--kb-report=none",
        f"--kb-build-cache={kb.pytester.path / 'cache'}", f"--kb-build-headers={setting}")
    assert result.ret == 0, result.stdout.str()
    [written] = (kb.pytester.path / "cache").glob("*/told.txt")
    lines = written.read_text().splitlines()
    assert len(lines) == 2, lines  # the build process's, then the worker's
    headers = str(kb.pytester.path / "cache" / "pch")
    assert lines == ([f"{headers} True"] * 2 if told else ["None False"] * 2), lines
