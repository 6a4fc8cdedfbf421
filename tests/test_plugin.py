from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from pytest_kernelbench.reporting import cli
from pytest_kernelbench.reporting.holds import timing_overlaps

STAGES = ("test_compile", "test_correct", "test_speed")
EXAMPLES = Path(__file__).parent / "examples"


def test_items_are_listed_with_readable_ids(kb):
    result = kb.run("good", args=("--collect-only", "-q"))
    ids = [f"level1/1_Scale::{stage}[good-s0]" for stage in STAGES]
    ids += [f"level2/1_Linear_ReLU::{stage}[good-s0]" for stage in STAGES]
    result.stdout.fnmatch_lines(ids[:3], consecutive=True)
    result.stdout.fnmatch_lines(ids[3:], consecutive=True)
    result.stdout.fnmatch_lines(["*9 tests collected*"])  # 3_WideSoftmax has no candidate


@pytest.mark.parametrize(("args", "count"), [
    (("-k", "ReLU"), 6),
    (("-k", "Scale and good"), 3),
    (("-m", "kb_compile"), 3),
    (("-m", "kb_level2"), 3),
    (("--kb-level=2",), 3),
])
def test_keyword_marker_and_level_selection(kb, args, count):
    result = kb.run("good", args=("--collect-only", "-q", *args))
    result.stdout.fnmatch_lines([f"*{count}/9 tests collected*" if "-k" in args or "-m" in args
                                 else f"*{count} tests collected*"])


def good_run(kb):
    """The good set, every stage, with pytest-benchmark's JSON beside the report."""
    return kb.run_shared("good", args=("--kb-p=0", "--benchmark-json=bench.json"),
                         keep=("bench.json",))


def test_a_good_set_compiles_and_passes_correctness(kb):
    result = good_run(kb).result
    result.assert_outcomes(passed=9)
    result.stdout.fnmatch_lines([
        "*kernelbench: fast_p on cpu*",
        "missing: 1 problem(s) have no candidate in set good, counted as not correct",
        "timed: 3 case(s), fastest first (speedup, 95% interval, verdict)",
        *["  * level?/?_*[[]good-s0[]]"] * 3,  # passed, or inconclusive on a busy host
        "| set *| level *| problems *| missing *| compiled *| correct *| fast_0 *| fast_1 *|*",
        "*",
        "| good *| 1 *| 3 *| 1 *| 2 *| 2 *| 0.667 *|*",
        "| good *| 2 *| 1 *| 0 *| 1 *| 1 *| 1.000 *|*",
    ], consecutive=True)
    listed = [line for line in result.stdout.lines if line.endswith("[good-s0]")]
    speedups = [float(line.split()[0].rstrip("x")) for line in listed if "x " in line]
    assert speedups == sorted(speedups, reverse=True)  # fastest first
    assert "Name (time in" not in result.stdout.str()  # pytest-benchmark's table: not asked for


def test_pytest_benchmark_s_table_shows_when_asked_and_its_json_is_written_either_way(kb):
    run = good_run(kb)
    if run.files["bench.json"]:  # written, table hidden
        assert json.loads(run.files["bench.json"])["benchmarks"]
    else:  # pytest-benchmark writes nothing where nothing was timed: only on a busy host
        assert all(record["speedup"] is None and any("(a busy host)" in flag
                                                     for flag in record.get("flags") or [])
                   for record in run.document["results"] if record.get("correct")), run.document
    result = kb.run("good", args=("-m", "kb_speed", "--kb-p=0", "--kb-trials=1",
                                  "--kb-benchmark-table"))
    text = result.stdout.str()
    assert "Name (time in" in text  # its table, before the kernelbench section
    assert text.index("Name (time in") < text.index("kernelbench: fast_p on cpu")


def test_the_json_report_holds_environment_config_and_one_record_per_sample(kb, timed):
    kb.run("good", "upstream_run", args=("--kb-trials=2", "--kb-p=0"))
    report = kb.report()
    assert {"environment", "config", "results", "summary"} <= set(report)
    assert report["environment"]["torch"]
    assert report["config"]["trials"] == 2
    records = kb.records()
    scale = records[("good", 1, "s0")]
    for key in ("level", "problem_id", "problem", "candidate_set", "sample", "compiled",
                "correct", "speedup", "baseline_time", "candidate_time", "status", "error"):
        assert key in scale
    assert scale["compiled"] and scale["correct"] and scale["status"] == "passed"
    timed(scale)
    assert scale["baseline_time"] > 0 and scale["candidate_time"] > 0
    if scale["speedup_interval"] is None:  # a speedup replaced, and the flag that says why
        assert any("baseline took" in flag or "the speedup uses the harness's clock" in flag
                   or "(a busy host)" in flag for flag in scale["flags"]), scale["flags"]
    else:
        low, high = scale["speedup_interval"]
        assert low <= scale["speedup"] <= high
    assert scale["timing"] == "events" and scale["timing_stopped"] in {"rse", "decided", "budget"}
    assert scale["candidate_stats"]["n"] >= 2 and scale["candidate_stats"]["rse"] >= 0
    assert {"load", "run", "time", "burst"} <= set(scale["harness_s"])
    phases = scale["load_phases"]
    assert {"worker_start", "start_confine", "start_cuda", "import", "construct"} <= set(phases)
    assert phases["start_confine"] + phases["start_cuda"] <= phases["worker_start"]
    assert scale["placement"] == {"worker": None, "device": "cpu", "gpu_uuid": None,
                                  "worker_gpu_uuid": None}
    held = scale["held"]
    # the timing alone, then what follows it (kernels, speed of light, verdict) shared again
    assert set(held) == {"compile", "correct", "speed", "attribute"}
    assert all(start <= end for start, end in held.values())
    assert held["compile"][1] <= held["correct"][1] <= held["speed"][0]
    assert held["speed"][1] <= held["attribute"][0]
    light = scale["speed_of_light"]
    assert light["flops"] >= 0 and light["min_bytes"] > 0 and light["ceilings"]["bytes_per_s"] > 0
    assert 0 < light["candidate_fraction"]
    wrong = records[("upstream_run", 1, "s1")]
    assert (wrong["correct"], wrong["status"], wrong["speedup"]) == (False, "mismatch", None)
    missing = records[("upstream_run", 3, "missing")]
    assert missing["status"] == "missing" and not missing["compiled"]


def test_speed_items_pass_only_above_p(kb):
    result = kb.run("good", args=("-m", "kb_speed", "--kb-p=1000"))
    result.stdout.fnmatch_lines(["*[[]slower[]] speedup * is not above p=1000*"])
    outcomes = result.parseoutcomes()
    # No item for the missing candidate. A timing that a busy host leaves undecided is
    # skipped as inconclusive, never passed.
    assert "passed" not in outcomes and outcomes["failed"] + outcomes.get("skipped", 0) == 3
    assert outcomes["failed"] >= 1
    # The records say what the items say: correct, but not faster than p.
    timed = [r for r in kb.report()["results"] if r["correct"]]
    assert len(timed) == 3
    assert sorted(r["status"] for r in timed if r["status"] != "inconclusive") \
        == ["slower"] * outcomes["failed"]
    # Each record holds each item's verdict, the speed item's agreeing with its status, and
    # whether it counts as fast at each p the summary shows, as the tables count it.
    speed = [r["verdicts"].pop("speed") for r in timed]
    assert [r["status"] for r in timed] == speed
    assert (speed.count("slower"), speed.count("inconclusive")) \
        == (outcomes["failed"], outcomes.get("skipped", 0))
    assert all(r["verdicts"] == {"compile": "passed", "correct": "passed"} for r in timed)
    assert all(not r["fast"]["1000"] and set(r["fast"]) == {"0", "1", "1000"} for r in timed)
    document = kb.report()
    assert all(row["fast_1000"] == 0.0 for row in document["summary"])
    tool = cli.merge([kb.pytester.path / "report.json"])
    assert tool["summary"] == document["summary"]
    assert tool["summary_upstream"] == document["summary_upstream"]


def test_cached_baselines_are_reused_until_retimed(kb, tmp_path):
    cache = tmp_path / "baselines"
    args = ("-m", "kb_speed", "--kb-p=0", "--kb-trials=1", f"--kb-baseline-cache={cache}")
    kb.run("good", args=(*args, "-k", "1_Scale"))
    first = kb.records()[("good", 1, "s0")]
    assert first["baseline_source"] == "cache" and len(list(cache.glob("*.json"))) == 1
    stored = next(cache.glob("*.json")).read_text()
    kb.run("good", args=(*args, "-k", "1_Scale"))
    assert next(cache.glob("*.json")).read_text() == stored  # read, not timed again
    # the same samples (the speedup may still be bounded by the harness's clock on a CPU)
    assert kb.records()[("good", 1, "s0")]["baseline_stats"] == first["baseline_stats"]
    kb.run("good", args=(*args, "-k", "1_Scale", "--kb-retime-baseline"))
    assert next(cache.glob("*.json")).read_text() != stored


def test_graph_timing_falls_back_to_events_with_a_note_on_the_cpu(kb):
    kb.run("good", args=("-m", "kb_speed", "--kb-p=0", "--kb-trials=1", "--kb-timing=graph",
                         "-k", "2_ReLU"))
    record = kb.records()[("good", 2, "s0")]
    assert record["timing"] == "events"
    assert "CUDA graphs need a CUDA device: timed with events" in record["flags"]


def test_a_compiled_baseline_is_timed_but_correctness_stays_eager(kb, correct_and_timed):
    kb.run("good", args=("--kb-p=0", "--kb-trials=1", "--kb-baseline=compile", "-k", "2_ReLU",
                         "--kb-timeout=600"))
    record = kb.records()[("good", 2, "s0")]
    correct_and_timed(record)
    assert kb.report()["config"]["baseline"] == "compile"


def upstream_level1_run(kb):
    """The set with several samples per problem and a missing one, level 1."""
    return kb.run_shared("upstream_run", args=("--kb-level=1", "--kb-p=0", "--kb-trials=1", "-rfs"))


def test_missing_candidates_make_no_items_but_are_counted_and_reported(kb):
    shared = upstream_level1_run(kb)
    result = shared.result
    # Three candidates (one wrong), three stages each: no skipped item per missing one.
    result.assert_outcomes(passed=7, failed=1, skipped=1)
    result.stdout.no_fnmatch_line("*SKIPPED*no candidate*")
    result.stdout.fnmatch_lines([
        "missing: 1 problem(s) have no candidate in set upstream_run, counted as not correct",
        "timed: 2 case(s), fastest first (speedup, 95% interval, verdict)",
        *["  * level1/?_*[[]upstream_run-s?[]]"] * 2,
        "failed: 1 case(s) (status, case: why)",
        "  mismatch  level1/1_*[[]upstream_run-s1[]]: trial 0 *",
        "| set *",
        "*",
        "| upstream_run *| 1 *| 3 *| 1 *| 2 *| 2 *| 0.667 *|*",
    ], consecutive=True)
    document = shared.report()
    assert document["complete"] and document["cases_not_run"] == 0
    assert document["resume_command"] is None
    result.stdout.no_fnmatch_line("*partial run*")
    missing = shared.records()[("upstream_run", 3, "missing")]
    assert missing["status"] == "missing" and missing["error"] == "no candidate in this set"
    assert missing["candidate_path"] is None and missing["fingerprint"] is None
    # A problem no set has a candidate for makes no items either, not even an empty one.
    result = kb.run("upstream_run", args=("--kb-level=1", "--collect-only", "-q"))
    result.stdout.no_fnmatch_line("*3_WideSoftmax*")


def test_a_run_stopped_part_way_counts_every_selected_case_and_says_how_to_finish(kb):
    # -x stops the run at the first failure: the ReLU that is off by 0.1%, under main's
    # tolerance. At p=0 the speed items before it pass whenever they are timed at all, so
    # where the run stops does not depend on how busy the machine is.
    args = ("--kb-trials=1", "--kb-p=0", "--kb-tolerance=main")
    result = kb.run("good", "slightly_off", args=(*args, "-x"))
    result.assert_outcomes(passed=7, failed=1)
    document = kb.report()
    # Two cases did not run to the end: the level-2 one never started, and the mismatch was
    # stopped before its speed item (it keeps its verdict, and runs again on resume).
    assert not document["complete"] and document["cases_not_run"] == 2
    command = document["resume_command"]
    assert " -x " in command and command.endswith(" --kb-resume=report.json")
    result.stdout.fnmatch_lines([
        "*kernelbench: fast_p on cpu*",
        "kernelbench: partial run: 2 selected case(s) did not run to the end, and count as not "
        "correct; to finish it: *pytest * --kb-resume=report.json",
    ], consecutive=True)
    status = {(r["candidate_set"], r["level"], r["problem_id"]): r["status"]
              for r in document["results"] if r["status"] != "missing"}
    assert status == {("good", 1, 1): "passed", ("good", 1, 2): "passed",
                      ("good", 2, 1): "not_run", ("slightly_off", 1, 2): "mismatch"}
    # Every selected problem stays in the denominators: the one not run and the missing one.
    rows = {(row["candidate_set"], row["level"]): row for row in document["summary"]}
    good_1, good_2 = rows["good", 1], rows["good", 2]
    assert (good_1["problems"], good_1["missing"], good_1["correct"]) == (3, 1, 2)
    assert good_1["fast_0"] == pytest.approx(2 / 3)
    assert (good_2["problems"], good_2["correct"], good_2["fast_0"]) == (1, 0, 0.0)
    # Its command (here without -x) finishes it: the settled cases are reused, the others run.
    result = kb.run("good", "slightly_off", args=(*args, "--kb-resume=report.json"))
    result.assert_outcomes(passed=4, failed=1, skipped=1, deselected=6)
    assert kb.report()["complete"]
    assert {r["status"] for r in kb.report()["results"]} == {"passed", "mismatch", "missing"}


def test_a_case_the_run_stopped_in_between_stages_is_not_run_and_not_correct(kb):
    # The run stops after ReLU's compile item, before its correctness (and the other cases).
    kb.pytester.makepyfile(stop_after_compile="""
        def pytest_runtest_teardown(item):
            if item.nodeid == "level1/2_ReLU::test_compile[good-s0]":
                item.session.shouldstop = "stopped between two stages"
    """)
    kb.pytester.syspathinsert()
    result = kb.run("good", args=("--kb-trials=1", "--kb-p=0", "-k", "not Scale",
                                  "-p", "stop_after_compile"))
    result.assert_outcomes(passed=1, deselected=3)
    document = kb.report()
    relu = kb.records()[("good", 2, "s0")]
    assert (relu["status"], relu["compiled"], relu["correct"]) == ("not_run", True, False)
    assert relu["error"] == "the run stopped in this case: it compiled and was not judged"
    assert {r["status"] for r in document["results"]} == {"not_run"}
    assert not document["complete"] and document["cases_not_run"] == 2
    rows = {row["level"]: row for row in document["summary"]}
    assert (rows[1]["problems"], rows[1]["compiled"], rows[1]["correct"]) == (1, 1, 0)
    result.stdout.fnmatch_lines(["kernelbench: partial run: 2 selected case(s) did not run to "
                                 "the end, and count as not correct*"])


BROKEN = {
    "syntax_error": ("test_compile", "syntax_error", "SyntaxError"),
    "import_error": ("test_compile", "import_error",
                     "No module named 'kernel_library_that_does_not_exist'"),
    "no_model_new": ("test_compile", "no_model_new", "defines no class ModelNew"),
    "init_error": ("test_compile", "init_error", "ValueError: weights not found"),
    "forward_error": ("test_correct", "runtime_error", "kernel launch failed: bad grid"),
    "wrong_values": ("test_correct", "mismatch", "1536 of 1536 elements"),
    "wrong_shape": ("test_correct", "shape_mismatch", "shape (32, 47), expected (32, 48)"),
    "wrong_dtype": ("test_correct", "dtype_mismatch", "dtype torch.float64"),
    "nan_output": ("test_correct", "nan_inf", "NaN/Inf"),
    "returns_zeros": ("test_correct", "mismatch", "worst at"),
    "exits_in_forward": ("test_correct", "exited", "candidate called exit(3)"),
    "hard_exit": ("test_correct", "exited", "exit code 7"),
    "segfault": ("test_correct", "crashed", "SIGSEGV"),
    "hangs": ("test_correct", "timeout", "no answer within 3 s"),
    "hangs_at_import": ("test_compile", "timeout", "no answer within 3 s"),
    "aborts": ("test_correct", "crashed", "SIGABRT"),
    "allocates_too_much": ("test_correct", "out_of_memory", "can't allocate memory"),
}




@pytest.fixture
def broken(kb):
    shared = kb.run_shared("broken", args=("--kb-level=1", "-k", "ReLU", "--kb-timeout=3", "-rfs",
                                           "--kb-trials=1"))
    return shared.result, shared.records()


def test_every_failure_kind_gets_its_status_and_message_and_the_run_goes_on(broken):
    result, records = broken
    for sample, (stage, status, text) in BROKEN.items():
        record = records[("broken", 2, sample)]
        assert record["status"] == status, (sample, record)
        assert text in record["error"], (sample, record["error"])
        result.stdout.fnmatch_lines([f"FAILED level1/2_ReLU::{stage}[[]broken-{sample}[]]*"])
    # Later stages are skipped with the reason, not failed again.
    result.stdout.fnmatch_lines(["*SKIPPED*compile failed (syntax_error)*"])
    result.stdout.fnmatch_lines(["*SKIPPED*correct failed (crashed)*"])
    assert result.parseoutcomes()["failed"] == len(BROKEN)


def test_the_section_comes_last_and_names_every_failure_with_its_status_and_reason(broken):
    result, records = broken
    lines = result.stdout.lines
    start = next(n for n, line in enumerate(lines) if "kernelbench: fast_p on cpu" in line)
    # after pytest's own short summary (its FAILED lines): the last thing before its result line
    assert any("short test summary info" in line for line in lines[:start])
    end = max(n for n, line in enumerate(lines) if re.match(r"=+ \d+ failed", line))
    # its last lines: where the report went, and the run's number in the report's history
    assert lines[end - 2].startswith("kernelbench report: ") and end - 2 > start
    assert lines[end - 1].startswith("kernelbench history: run ")
    section = lines[start:end]
    failed = [r for r in records.values() if r["status"] in
              {status for _, status, _ in BROKEN.values()} | {"unsupported_device"}]
    assert f"failed: {len(failed)} case(s) (status, case: why)" in section
    for record in failed:
        label = f"level1/2_ReLU[broken-{record['sample']}]: "
        [line] = [line for line in section if label in line]
        assert line.split()[0] == record["status"]
        assert line.partition(label)[2][:30] == record["error"][:30]


def test_a_cuda_only_candidate_is_skipped_on_cpu(broken):
    result, records = broken
    assert records[("broken", 2, "needs_cuda")]["status"] == "unsupported_device"
    result.stdout.fnmatch_lines(["*SKIPPED*CUDA-only candidate: needs a CUDA device*"])


def test_zeros_do_not_pass_a_problem_with_tiny_outputs(kb):
    kb.run("cheats", args=("-k", "WideSoftmax", "--kb-trials=1"))
    record = kb.records()[("cheats", 3, "s0")]
    assert record["status"] == "mismatch"
    assert "whole-tensor relative error" in record["error"]


def test_an_output_buffer_reused_across_calls_is_not_a_cache(kb):
    # Each timed output is checked as it was when returned, not after later calls wrote it.
    kb.run("reused_buffer", args=("-k", "ReLU", "--kb-trials=2", "--kb-p=0"))
    record = kb.records()[("reused_buffer", 2, "s0")]
    assert record["correct"] is True and record["status"] != "cheat", record["error"]
    assert any("same buffer" in flag for flag in record["flags"]), record["flags"]


def test_a_candidate_that_replays_its_first_calls_addresses_fails_correctness(kb):
    # As a CUDA graph captured at the first call does: it reads where the first input was.
    kb.run("address_replay", args=("-k", "ReLU", "--kb-trials=3", "-m", "not kb_speed"))
    record = kb.records()[("address_replay", 2, "s0")]
    assert record["status"] == "cheat", record
    assert record["error"].startswith("trial 1") and "inputs of trial 0" in record["error"]


def test_an_honest_answer_to_a_problem_of_rounding_noise_passes(kb):
    # The output is zero in exact arithmetic: another summation order is as far from the
    # fp32 reference as the reference is from the truth, which a float64 reference shows.
    kb.run("rounding", problems="rounding_problems", args=("--kb-trials=2", "--kb-p=0"))
    record = kb.records()[("rounding", 1, "s0")]
    assert record["correct"] is True, record["error"]
    assert any("float64 reference" in flag for flag in record["flags"])


def test_a_triton_candidate_runs_under_the_interpreter_on_cpu(kb):
    kb.run("triton", args=("-k", "ReLU", "--kb-trials=2"))
    record = kb.records()[("triton", 2, "s0")]
    # correct, and timed (on a busy host the harness's clock may leave its speedup unsettled)
    assert record["correct"] and record["candidate_time"] > 0


def test_cpp_extensions_build_ahead_in_parallel_and_a_build_error_shows_the_compiler_line(kb):
    # -q: pytest's dots share the line, and each build's line still starts one of its own
    args = ("--kb-level=1", "--kb-timeout=600", "--kb-trials=2", "--kb-build-jobs=2", "-q")
    result = kb.run("cpp_ext", args=args)
    result.stdout.fnmatch_lines(["kernelbench: 2 extension(s): 2 to build, 0 cached, 0 failed "
                                 "before, 2 at a time while the items run"])
    result.stdout.fnmatch_lines(["kernelbench: build ?/2 built 2_ReLU.py (* s, * s elapsed)"])
    result.stdout.fnmatch_lines(["kernelbench: build ?/2 failed 1_Scale.py *main.cpp:6:22: error*"])
    records = kb.records()
    assert records[("cpp_ext", 2, "s0")]["correct"]
    broken = records[("cpp_ext", 1, "s0")]
    assert broken["status"] == "compile_error"
    assert "build failed" in broken["error"] and "error" in broken["error"]
    assert len(broken["error"]) < 400
    built = {Path(b["candidate"]).name: b["status"] for b in kb.report()["builds"]}
    assert built == {"1_Scale.py": "failed", "2_ReLU.py": "built"}
    # Where the good build's time went: its compile and link from ninja's log, the rest its
    # process's own; none of it more than the whole.
    good = next(b for b in kb.report()["builds"] if b["status"] == "built")
    phases = good["phases"]
    assert phases["cxx_s"] > 0 and phases["link_s"] > 0 and phases["nvcc_s"] == 0
    # (a build stopped while a timing ran spent that pause inside ninja's wall time too)
    assert phases["ninja_s"] + phases["process_s"] == pytest.approx(
        good["seconds"] + phases.get("paused_s", 0.0), abs=0.01)
    assert good["span"][1] - good["span"][0] == pytest.approx(
        good["seconds"] + phases.get("paused_s", 0.0), abs=0.01)  # its wall, pauses in it
    assert records[("cpp_ext", 2, "s0")]["extension"] == "built"
    assert broken["extension"] == "failed" and "error" in broken["extension_error"]
    # The same sources again: the good build is reused, and the failed one is not built again
    # (same source, same toolchain): its compiler lines come back from the first attempt.
    again = kb.run("cpp_ext", args=args)
    again.stdout.fnmatch_lines(["kernelbench: 2 extension(s): 0 to build, 1 cached, 1 failed "
                                "before, 2 at a time while the items run"])
    assert kb.records()[("cpp_ext", 2, "s0")]["correct"]
    assert kb.records()[("cpp_ext", 2, "s0")]["extension"] == "cached"
    retried = kb.records()[("cpp_ext", 1, "s0")]
    assert retried["status"] == "compile_error" and "not attempted again" in retried["error"]
    assert "main.cpp:6:22: error" in retried["extension_error"]


def test_an_extension_built_into_a_temporary_folder_of_its_own_counts_as_built(kb):
    kb.run("tmp_build", args=("--kb-level=1", "--kb-timeout=600", "--kb-trials=1", "--kb-p=0"))
    record = kb.records()[("tmp_build", 2, "s0")]
    assert record["correct"] and record["extension"] == "built", record["extension_error"]


def test_a_candidate_that_builds_in_its_constructor_is_built_ahead(kb):
    result = kb.run("init_ext", args=("--kb-level=1", "--kb-timeout=600", "--kb-trials=1",
                                      "--kb-p=0"))
    result.stdout.fnmatch_lines(["kernelbench: build 1/1 built 2_ReLU.py (* s, * s elapsed)"])
    record = kb.records()[("init_ext", 2, "s0")]
    assert record["correct"] and record["extension"] in {"built", "cached"}
    # The compile item only loaded what the build phase made.
    assert record["harness_s"]["load"] < min(b["seconds"] for b in kb.report()["builds"])


def test_a_candidate_that_builds_at_its_first_call_is_built_ahead(kb):
    kb.run("first_call_ext", args=("--kb-level=1", "--kb-timeout=600", "--kb-trials=1",
                                   "--kb-p=0"))
    [build] = kb.report()["builds"]
    assert build["status"] == "built"
    record = kb.records()[("first_call_ext", 2, "s0")]
    assert record["correct"] and record["extension"] in {"built", "cached"}
    assert record["harness_s"]["run"] < build["seconds"]  # its item loaded, did not build
    assert record["prebuild"] == build  # the record says it too, should the run be cut short


def test_a_candidate_that_falls_back_to_pytorch_after_its_build_failed_is_named(kb):
    result = kb.run("fallback", "good", args=("--kb-level=1", "--kb-timeout=600",
                                              "--kb-trials=1", "--kb-p=0", "-k", "2_ReLU"))
    record = kb.records()[("fallback", 2, "s0")]
    assert record["correct"] and record["extension"] == "failed"
    assert "error" in record["extension_error"]
    assert kb.records()[("good", 2, "s0")]["extension"] == "none"
    result.stdout.fnmatch_lines(["warning: fallback level1/2 s0 is correct but ran without its "
                                 "own kernel (its extension failed to build): *error*"])
    # It caught the error itself, and still the build phase knew the build failed: the worker
    # did not run the compiler again.
    [build] = kb.report()["builds"]
    assert build["status"] == "failed" and record["harness_s"]["load"] < build["seconds"] / 2


def test_a_build_that_fails_in_an_item_is_not_attempted_again(kb):
    args = ("--kb-level=1", "--kb-timeout=600", "--kb-trials=3", "--kb-p=0", "-k", "2_ReLU")
    kb.run("late_fallback", args=args)
    [marker] = (kb.pytester.path / "kb-builds").glob("*/.kb-failed")
    assert "error" in marker.read_text()  # the compiler's lines, from the worker's log
    first = kb.records()[("late_fallback", 2, "s0")]
    assert first["correct"] and "error" in first["extension_error"]  # said in the record too
    again = kb.run("late_fallback", args=args)
    again.stdout.fnmatch_lines(["kernelbench: 1 extension(s): 0 to build, 0 cached, 1 failed "
                                "before*"])
    record = kb.records()[("late_fallback", 2, "s0")]
    assert record["correct"] and record["prebuild"]["status"] == "failed"
    # Its trials ran no compiler this time.
    assert record["harness_s"]["run"] < first["harness_s"]["run"] / 2, (first, record)


def test_a_build_its_import_makes_again_is_left_to_its_item_in_later_runs(kb):
    # The build phase builds it, and the worker's import builds it again: the next run does
    # not build it ahead (nor call its cache changed), it leaves it to the item.
    args = ("--kb-level=1", "--kb-timeout=600", "--kb-trials=1", "--kb-p=0", "-k", "2_ReLU")
    kb.run("rebuilds", args=args)
    [first] = kb.report()["builds"]
    assert first["status"] == "built"
    assert kb.records()[("rebuilds", 2, "s0")]["correct"]
    [folder] = (kb.pytester.path / "kb-builds").glob("*/.kb-rebuilds")
    assert not (folder.parent / ".kb-built").exists()
    kb.run("rebuilds", args=args)
    [again] = kb.report()["builds"]
    assert (again["status"], again["message"]) == ("deferred", "")
    record = kb.records()[("rebuilds", 2, "s0")]
    assert record["correct"] and record["extension"] == "built", record
    assert not any("changed" in flag for flag in record.get("flags", []))


def test_a_source_written_again_at_each_import_is_built_once(kb):
    # The build phase builds it; the item's import writes the same bytes again and loads what
    # was built, and so does the next run: neither compiles it again.
    args = ("--kb-level=1", "--kb-timeout=600", "--kb-trials=1", "--kb-p=0", "-k", "2_ReLU")
    kb.run("written_sources", args=args)
    [build] = kb.report()["builds"]
    assert build["status"] == "built"
    assert kb.records()[("written_sources", 2, "s0")]["correct"]
    kb.run("written_sources", args=args)
    [again] = kb.report()["builds"]
    record = kb.records()[("written_sources", 2, "s0")]
    assert again["status"] == "cached" and record["extension"] == "cached", record
    [ninja_log] = (kb.pytester.path / "kb-builds").glob("*/kb_written_sources/.ninja_log")
    assert [line.split()[-2] for line in ninja_log.read_text().splitlines()[1:]] == \
        ["one.o", "kb_written_sources.so"]  # one compile and one link in all
    assert not list((kb.pytester.path / "kb-builds").glob("*/.kb-rebuilds"))


def test_xdist_workers_share_the_builds_without_building_twice(kb):
    kb.plugin_args += ["-p", "xdist.plugin"]
    kb.run("cpp_ext", args=("-n", "2", "--kb-level=1", "--kb-timeout=600", "--kb-trials=1"))
    records = kb.records()
    assert records[("cpp_ext", 2, "s0")]["correct"]
    assert records[("cpp_ext", 1, "s0")]["status"] == "compile_error"
    built = list((kb.pytester.path / "kb-builds").glob("*/.kb-built"))
    assert len(built) == 1  # the good source, once, whichever worker built it
    # The report lists the builds the workers ran, each candidate once.
    statuses = {Path(b["candidate"]).name: b["status"] for b in kb.report()["builds"]}
    assert statuses == {"1_Scale.py": "failed", "2_ReLU.py": "built"}, kb.report()["builds"]


def test_speed_numbers_reach_pytest_benchmark(kb, timed):
    shared = good_run(kb)
    data = json.loads(shared.files["bench.json"])
    names = {b["fullname"]: b for b in data["benchmarks"]}
    bench = names["level1/1_Scale::test_speed[good-s0]"]
    assert bench["group"] == "level1/1_Scale"
    # the speed item's speedup, or none only where a busy host left the clock unsettled (the
    # record says so)
    scale = shared.records()[("good", 1, "s0")]
    timed({**scale, "speedup": bench["extra_info"]["speedup"]})
    assert bench["stats"]["rounds"] >= 2


def good_xdist_run(kb):
    """The good set on two xdist workers, each item's line naming its worker (-v)."""
    kb.plugin_args += ["-p", "xdist.plugin"]
    return kb.run_shared("good", args=("-n", "2", "-v", "--kb-p=0", "--kb-trials=1"))


def test_under_xdist_speedups_still_reach_the_summary_and_report(kb, timed):
    shared = good_xdist_run(kb)
    shared.result.stdout.fnmatch_lines(["| good *| 1 *| 3 *| 1 *| 2 *| 2 *|*"])
    records = shared.records()
    timed(records[("good", 1, "s0")])
    held = [r for r in records.values() if "speed" in r.get("held", {})]
    assert held and {r["placement"]["worker"] for r in held} <= {"gw0", "gw1"}
    assert timing_overlaps(list(records.values())) == []  # one CPU lock for both workers


def test_under_xdist_the_controller_alone_keeps_the_run_in_the_history(kb):
    assert [name[:5] for name in good_xdist_run(kb).kept] == ["0001_"]


def test_under_xdist_the_stages_of_a_case_share_a_worker(kb):
    result = good_xdist_run(kb).result
    workers: dict[str, set[str]] = {}
    for line in result.stdout.lines:
        found = re.match(r"\[(gw\d+)\].*? (?:PASSED|FAILED|SKIPPED) (\S+)::test_\w+\[(\S+)\]", line)
        if found:
            workers.setdefault(f"{found[2]}[{found[3]}]", set()).add(found[1])
    assert len(workers) == 3 and all(len(seen) == 1 for seen in workers.values()), workers


def test_a_run_from_a_folder_with_its_own_tests_only_evaluates(kb):
    kb.pytester.makepyfile(test_unrelated="def test_x():\n    assert False\n")
    result = kb.run("good", args=("--collect-only", "-q"))
    assert "test_unrelated" not in result.stdout.str()


def test_the_header_names_no_testpaths_that_the_evaluation_does_not_use(kb):
    kb.pytester.makeini("[pytest]\ntestpaths = tests\n")
    kb.pytester.mkdir("tests")
    kb.pytester.makepyfile(**{"tests/test_unrelated": "def test_x():\n    assert False\n"})
    plain = kb.pytester.runpytest(*kb.plugin_args, "--collect-only")
    plain.stdout.fnmatch_lines(["testpaths: tests", "*test_unrelated*"])  # the ini's, in use
    result = kb.run("good", args=("--collect-only",))
    result.stdout.no_fnmatch_line("testpaths: *")
    assert "test_unrelated" not in result.stdout.str()
    result.stdout.fnmatch_lines(["*9 tests collected*"])


HOSTILE = {
    "mutates_input": ("test_correct", "mutated_input", "modified in place"),
    "patches_torch": ("test_correct", "mismatch", "differ"),
    "replays_after_two_calls": ("test_speed", "cheat", "output of a timed call is wrong"),
    "returns_subclass": ("test_correct", "cheat", "not a plain torch.Tensor"),
    "finishes_in_background": ("test_correct", "mismatch", "differ"),
    "caches_by_shape": ("test_correct", "cheat", "answer for the inputs of trial 0"),
}


def hostile_run(kb):
    """The hostile set, then the good one in the same session; the candidates only upstream's
    rules pass timed too, for their upstream speedup."""
    return kb.run_shared("hostile", "good", args=("--kb-level=1", "--kb-trials=2", "--kb-p=0",
                                                  "--kb-upstream-timing=on"))


@pytest.fixture
def hostile(kb):
    shared = hostile_run(kb)
    return shared.result, shared.records()


def test_every_cheat_gets_its_status_and_honest_candidates_keep_their_verdicts(hostile, correct_and_timed):
    result, records = hostile
    for sample, (stage, status, text) in HOSTILE.items():
        record = records[("hostile", 2, sample)]
        assert record["status"] == status, (sample, record)
        assert text in record["error"], (sample, record["error"])
        result.stdout.fnmatch_lines([f"FAILED level1/2_ReLU::{stage}[[]hostile-{sample}[]]*"])
    # The good set runs after the hostile one in the same session, on fresh workers.
    for problem_id in (1, 2):
        good = records[("good", problem_id, "s0")]
        correct_and_timed(good)


def test_each_record_carries_the_verdict_upstreams_rules_give(hostile, kb):
    result, records = hostile
    up = {sample: records[("hostile", 2, sample)]["upstream"]
          for sample in ("mutates_input", "replays_after_two_calls", "returns_subclass",
                         "caches_by_shape")}
    # Upstream lets forward change its inputs and checks nothing during timing: correct, and
    # timed for its speedup although our verdicts fail them.
    for sample in ("mutates_input", "replays_after_two_calls"):
        assert up[sample]["correct"] is True and up[sample]["speedup"] > 0, (sample, up[sample])
    assert up["returns_subclass"]["correct"] is None  # its values are never read here
    assert up["caches_by_shape"]["correct"] is False  # trial 1 is wrong elementwise too
    good = records[("good", 2, "s0")]["upstream"]
    # upstream's own rule decides its fast: correct, and its mean-of-times speedup above p
    assert good == {"rules": "v0", "compiled": True, "correct": True,
                    "speedup": good["speedup"],
                    "fast": {"0": True, "1": good["speedup"] > 1}} and good["speedup"] > 0
    result.stdout.fnmatch_lines(["*under upstream KernelBench v0's rules*"])
    document = hostile_run(kb).report()
    assert {row["candidate_set"] for row in document["summary_upstream"]} == {"hostile", "good"}


def test_a_candidate_only_upstreams_rules_pass_is_not_timed_unless_asked(kb):
    # Its timing would hold the device alone for a figure no verdict of ours reads.
    result = kb.run("hostile", args=("--kb-level=1", "--kb-trials=2", "--kb-p=0",
                                     "-k", "mutates_input"))
    record = kb.records()[("hostile", 2, "mutates_input")]
    assert record["status"] == "mutated_input"
    assert record["upstream"]["correct"] is True and record["upstream"]["speedup"] is None
    assert not any(record["upstream"]["fast"].values())
    assert "time" not in record["harness_s"]  # its worker was never asked to time it
    result.stdout.fnmatch_lines(["*not timed: 1 case(s) correct under upstream's rules only*"])
    assert kb.report()["config"]["upstream_timing"] is False


def test_a_candidate_that_switches_tf32_on_is_recorded_as_such(hostile):
    _, records = hostile
    tf32 = records[("hostile", 2, "switches_on_tf32")]
    assert tf32["correct"] and tf32["tf32_by_candidate"] is True
    assert records[("good", 2, "s0")]["tf32_by_candidate"] is False


def test_input_changes_can_be_allowed_as_upstream_does(kb, correct_and_timed):
    kb.run("hostile", args=("--kb-level=1", "--kb-trials=2", "--kb-p=0", "-k", "mutates_input",
                            "--kb-allow-input-changes"))
    record = kb.records()[("hostile", 2, "mutates_input")]
    correct_and_timed(record)
    assert kb.report()["config"]["allow_input_changes"] is True


def test_uninitialised_memory_never_holds_the_reference_answer(hostile):
    _, records = hostile
    record = records[("hostile", 2, "returns_uninitialised")]
    # Fresh memory has no fixed content, so the exact status varies; it is never correct.
    assert not record["correct"] and record["status"] in ("mismatch", "nan_inf")
    assert "allocates uninitialised tensors" in " ".join(record["static_scan"])


def test_a_candidate_that_slows_the_baseline_in_its_process_gains_nothing(hostile, timed):
    _, records = hostile
    record = records[("hostile", 2, "slows_the_baseline")]
    assert record["correct"] and record["status"] == "passed"
    # The baseline's 2 ms per call there would make a speedup of hundreds; the harness's own
    # figure for the baseline replaces it (or settles none on a host too busy for its clock).
    timed(record)
    assert (record["speedup"] or 0) < 10 and record["speedup_interval"] is None
    assert any("baseline took" in flag for flag in record["flags"])


def test_a_candidate_that_redefines_the_problem_is_judged_on_the_real_one(hostile, correct_and_timed):
    _, records = hostile
    record = records[("hostile", 2, "redefines_problem")]
    honest = records[("good", 2, "s0")]
    correct_and_timed(record)
    # Timed on the problem's 32x48 input, not its own 1x1: as slow as the honest candidate.
    assert record["candidate_time"] > 0.3 * honest["candidate_time"]


def test_a_candidate_that_slows_the_clock_is_caught_by_the_harness_clock(kb):
    kb.run("clock", problems="timing_problems", args=("--kb-trials=1", "--kb-p=0"))
    record = kb.records()[("clock", 1, "s0")]
    assert record["status"] == "cheat"
    assert "candidate time does not add up" in record["error"]
    assert record["speedup"] is None


def test_on_a_cpu_a_shifted_clock_buys_no_speedup(kb):
    result = kb.run("shifted_clock", problems="timing_problems",
                    args=("--kb-trials=1", "--kb-p=1.4"))
    record = kb.records()[("shifted_clock", 1, "s0")]
    # It reports about 1.8x against the eager ReLU it runs; the harness's clock sees about 1x,
    # and bounds the speedup (slower), unless the gap is large enough to be a cheat outright;
    # on a busy host its bursts may settle nothing (inconclusive: no speedup). Never passed.
    assert result.parseoutcomes().get("passed") == 2  # compile and correct, not speed
    assert record["correct"] and record["status"] in ("cheat", "slower", "inconclusive")
    assert record["speedup"] is None or record["speedup"] < 1.4


def test_a_problem_file_changed_by_a_candidate_stops_the_run_and_keeps_what_was_measured(
        kb, correct_and_timed):
    problems = kb.pytester.path / "problems"
    shutil.copytree(EXAMPLES / "problems", problems)  # the candidate writes to this copy
    # An honest candidate for the problem it changes: its case comes next.
    tampers = kb.pytester.path / "tampers"
    shutil.copytree(EXAMPLES / "candidates" / "tampers", tampers)
    (tampers / "level1" / "3_WideSoftmax.py").write_text(
        "import torch\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n"
        "    def forward(self, x):\n        return torch.softmax(x, dim=1)\n")
    # Unconfined, so that the write goes through and the harness's own check has to catch it.
    result = kb.pytester.runpytest(
        *kb.plugin_args, f"--kb-problems={problems}", "--kb-report=report.json",
        f"--kb-candidates={tampers}", "--kb-level=1",
        "--kb-trials=1", "--kb-p=0", "--benchmark-max-time=0.001", "-p", "no:cacheprovider",
        "--kb-confine=off")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*3_WideSoftmax.py: the problem file changed during the run*"
                                 "last case evaluated in this process was "
                                 "level1/2_ReLU[[]tampers-s0[]]*"])
    # The honest ReLU it also was is judged and reported; nothing ran on the changed problem.
    records = kb.records()
    correct_and_timed(records[("tampers", 2, "s0")])
    assert records[("tampers", 3, "s0")]["status"] == "not_run"
    assert not kb.report()["complete"]


def test_every_candidate_file_that_matches_no_problem_is_counted_in_one_line(kb):
    stray = kb.pytester.path / "stray"
    shutil.copytree(EXAMPLES / "candidates" / "stray", stray)
    relu = (stray / "level1" / "2_ReLU.py").read_text()
    for name in ("level4/1_X.py", "level2/7_Nope.py", "level1/notes.py"):
        (stray / name).parent.mkdir(exist_ok=True)
        (stray / name).write_text(relu)
    argv = [*kb.plugin_args, f"--kb-problems={EXAMPLES / 'problems'}", "--kb-report=report.json",
            "--benchmark-max-time=0.001", "-p", "no:cacheprovider", f"--kb-candidates={stray}",
            "--kb-level=1", "-k", "ReLU", "--kb-trials=1", "--kb-p=0"]
    result = kb.pytester.runpytest(*argv)
    # A level the problems folder lacks, an id no problem has in a level the run left out, a
    # name with no id: all counted, one named.
    result.stdout.fnmatch_lines(["warning: 4 candidate file(s) match no problem and were not "
                                 "evaluated, e.g. stray/level1/42_Typo.py (no problem 42 in "
                                 "level1/) (-v lists them)"])
    assert "1_X.py" not in result.stdout.str()
    result = kb.pytester.runpytest(*argv, "-v")
    result.stdout.fnmatch_lines(["  stray/level1/42_Typo.py (no problem 42 in level1/)",
                                 "  stray/level1/notes.py (its name or folder gives no level and id)",
                                 "  stray/level2/7_Nope.py (no problem 7 in level2/)",
                                 "  stray/level4/1_X.py (no level4/ among the problems)"],
                                consecutive=True)


def test_a_candidate_whose_file_name_names_another_problem_is_warned_about(kb):
    result = kb.run("stray", args=("-k", "Scale", "--kb-trials=1", "--kb-p=0"))
    result.stdout.fnmatch_lines(["warning: *stray/level1/1_Softmax.py is judged as "
                                 "level1/1_Scale (its id), but its name says otherwise"])
    assert "2_ReLU.py is judged" not in result.stdout.str()


def test_a_run_whose_every_problem_is_broken_says_so_in_one_line_with_no_empty_table(kb):
    problems = kb.pytester.path / "problems"
    shutil.copytree(EXAMPLES / "problems", problems)
    for broken in (problems / "level1" / "2_ReLU.py", problems / "level2" / "1_Linear_ReLU.py"):
        broken.write_text(broken.read_text().replace("def get_inputs():", "def get_inputs(:"))
    result = kb.pytester.runpytest(
        *kb.plugin_args, f"--kb-problems={problems}", "--kb-report=report.json",
        f"--kb-candidates={EXAMPLES / 'candidates' / 'good'}", "--kb-trials=1", "--kb-p=0",
        "--benchmark-max-time=0.001", "-p", "no:cacheprovider", "-k", "ReLU")
    result.stdout.fnmatch_lines(["*kernelbench: fast_p on cpu*", "error: *2_ReLU.py: Syntax*",
                                 "error: *1_Linear_ReLU.py: Syntax*",
                                 "kernelbench: no problem could be judged: 2 problem_error",
                                 "kernelbench report: *report.json"], consecutive=True)
    result.stdout.no_fnmatch_line("| set *")
    result.stdout.no_fnmatch_line("*upstream KernelBench*rules*")
    assert kb.report()["summary"] == []


def test_a_broken_problem_is_the_problem_s_fault_and_said_once(kb):
    problems = kb.pytester.path / "problems"
    shutil.copytree(EXAMPLES / "problems", problems)
    relu_file = problems / "level1" / "2_ReLU.py"
    relu_file.write_text(relu_file.read_text().replace("def get_inputs():", "def get_inputs(:"))
    (problems / "level1" / "3_WideSoftmax.py").write_text(  # no get_inputs; no candidate either
        "import torch\n\n\nclass Model(torch.nn.Module):\n    pass\n\n\n"
        "def get_init_inputs():\n    return []\n")
    chain_file = problems / "level2" / "1_Linear_ReLU.py"
    # Its inputs no longer fit its own layer: the reference fails, not the candidate.
    chain_file.write_text(re.sub(r"torch\.randn\((\w+), (\w+)\)", r"torch.randn(\1, \2 + 1)",
                                 chain_file.read_text(), count=1))
    result = kb.pytester.runpytest(
        *kb.plugin_args, f"--kb-problems={problems}", "--kb-report=report.json",
        f"--kb-candidates={EXAMPLES / 'candidates' / 'good'}", "--kb-trials=1", "--kb-p=0",
        "--benchmark-max-time=0.001", "-p", "no:cacheprovider")
    records = {(r["level"], r["problem_id"]): r for r in kb.report()["results"]}
    relu, chain = records[(1, 2)], records[(2, 1)]
    # A syntax error at collection, a reference that fails at run time: neither is the
    # candidate's, each names the problem's file, and no candidate stage runs against it.
    assert relu["status"] == "problem_error" and not relu["compiled"]
    assert relu["error"].endswith("2_ReLU.py: SyntaxError: invalid syntax (line 10)")
    assert chain["status"] == "problem_error" and "1_Linear_ReLU.py: its inputs or reference " \
        "failed: RuntimeError" in chain["error"]
    assert "harness_s" not in relu
    result.stdout.fnmatch_lines(["[[]problem_error[]] the problem, not the candidate: "
                                 "*2_ReLU.py: SyntaxError*"])
    result.stdout.fnmatch_lines(["error: *2_ReLU.py: SyntaxError: invalid syntax (line 10) "
                                 "(1 case(s) not evaluated, not scored)"])
    assert "kb_problem_" not in result.stdout.str()  # no internal module names
    # Not scored: level 1 counts the two problems that could be evaluated.
    level1 = next(row for row in kb.report()["summary"] if row["level"] == 1)
    assert (level1["problems"], level1["correct"]) == (2, 1)
    outcomes = result.parseoutcomes()
    assert outcomes["failed"] == 2  # the compile items of the two broken problems, nothing more


def test_sets_with_several_samples_per_problem_get_pass_at_k(kb):
    shared = upstream_level1_run(kb)
    shared.result.stdout.fnmatch_lines(["upstream_run level 1: pass@1 *; fast_0@1 * (unbiased "
                                        "estimates over each problem's samples)"])
    [row] = shared.report()["summary"]
    # Problem 1 has a right and a wrong sample, problem 2 one right one, problem 3 none:
    # (1/2 + 1 + 0) / 3.
    assert row["pass@1"] == 0.5


def test_feedback_files_tell_the_next_attempt_what_went_wrong_and_where(kb, timed):
    kb.run("broken", "good", args=("--kb-level=1", "--kb-trials=1", "--kb-p=0", "-k",
                                   "ReLU and (forward_error or syntax_error or wrong_values "
                                   "or good)", "--kb-feedback=fb"))
    folder = kb.pytester.path / "fb"
    syntax = (folder / "broken" / "level1_2_syntax_error.txt").read_text()
    assert "failed at compile: SyntaxError: expected ':'" in syntax
    assert "syntax_error.py\", line 4" in syntax and "worker.py" not in syntax
    raised = json.loads((folder / "broken" / "level1_2_forward_error.json").read_text())
    assert (raised["status"], raised["stage_reached"]) == ("runtime_error", "compile")
    assert any("forward_error.py\", line 6, in forward" in line for line in raised["details"])
    wrong = (folder / "broken" / "level1_2_wrong_values.txt").read_text()
    assert "failed at correct: trial 0" in wrong and "worst at (0, 1): expected 0, got 0.5" in wrong
    good = json.loads((folder / "good" / "level1_2_s0.json").read_text())
    assert good["stage_reached"] == "speed"
    timed(good)
    assert 0 < good["speed_of_light_fraction"] <= 1
    assert not (folder / "good" / "level1_3_missing.json").exists()  # no candidate, no author


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_an_interrupted_run_ends_with_its_summary_and_report(kb, workers, correct_and_timed):
    import os
    import signal
    import subprocess
    import sys
    import time

    # One case that hangs in its correctness trials, beside one that settles at once.
    mine = kb.pytester.path / "mine"
    (mine / "level1" / "2_ReLU").mkdir(parents=True)
    shutil.copy(EXAMPLES / "candidates" / "good" / "level1" / "1_Scale.py", mine / "level1")
    shutil.copy(EXAMPLES / "candidates" / "broken" / "level1" / "2_ReLU" / "hangs.py",
                mine / "level1" / "2_ReLU")
    plugins = [*kb.plugin_args, *(["-p", "xdist.plugin"] if workers else [])]
    argv = [sys.executable, "-m", "pytest", *plugins, *workers, "-p", "no:cacheprovider",
            f"--kb-problems={EXAMPLES / 'problems'}", f"--kb-candidates={mine}", "--kb-level=1",
            "--kb-report=report.json", "--kb-trials=1", "--kb-p=0", "--kb-timeout=300",
            "--benchmark-max-time=0.001", f"--kb-build-cache={kb.pytester.path / 'kb-builds'}"]
    # Its own process group, which SIGINT reaches as a Ctrl-C at a terminal does; SIGINT at
    # its default, as at a terminal, even where this suite runs in the background (a shell
    # starts background jobs with SIGINT ignored, and Python then keeps ignoring it).
    run = subprocess.Popen(argv, cwd=kb.pytester.path, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, start_new_session=True,
                           preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    stream = kb.pytester.path / "report.jsonl"
    deadline = time.monotonic() + 120
    # The Scale case timed (the missing case's record, streamed at once, says stage 2 too).
    while time.monotonic() < deadline and not any(
            '"stage": 2' in line and ('"status": "passed"' in line
                                      or '"status": "inconclusive"' in line)
            for line in (stream.read_text() if stream.exists() else "").splitlines()):
        time.sleep(0.5)
    time.sleep(3)  # the hanging case is in its trials by now
    os.killpg(run.pid, signal.SIGINT)
    output, _ = run.communicate(timeout=120)
    assert run.returncode == pytest.ExitCode.INTERRUPTED, output
    assert "INTERNALERROR" not in output
    assert re.search(r"kernelbench: partial run: 1 selected case\(s\) did not run to the end.*"
                     r"to finish it: .*--kb-resume=report\.json", output), output
    assert "| mine | 1     | 3        | 1       |" in output  # every problem counted
    document = kb.report()
    assert not document["complete"] and document["cases_not_run"] == 1
    status = {r["problem_id"]: r["status"] for r in document["results"]}
    assert status[1] in ("passed", "inconclusive") and status[3] == "missing"
    correct_and_timed(next(r for r in document["results"] if r["problem_id"] == 1))  # kept
    assert status[2] == "not_run"  # stopped inside its correctness trials: no status null
