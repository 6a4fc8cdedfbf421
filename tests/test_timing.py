"""The timing engine's statistics and stopping rule, the baseline cache, speed-of-light figures
and the build cache's addressing."""

from __future__ import annotations

import math
import threading
import time
from types import SimpleNamespace

import pytest
import torch

from pytest_kernelbench.building import builds
from pytest_kernelbench.gpu import roofline, timing
from pytest_kernelbench.judge import baselines
from pytest_kernelbench.suite.discovery import Candidate, Case, Problem


def test_the_rse_of_the_median_shrinks_with_more_samples_and_ignores_outliers():
    few = [1.0, 1.1, 0.9, 1.05, 0.95] * 4
    many = few * 25
    assert timing.rse_of_median(many) == pytest.approx(timing.rse_of_median(few) / 5, rel=0.05)
    assert timing.rse_of_median(many + [1000.0] * 5) < 2 * timing.rse_of_median(many)
    assert timing.rse_of_median([1.0, 2.0]) == math.inf


def test_the_speedup_interval_brackets_the_ratio_and_widens_with_noise():
    steady = timing.summarize([1.0 + 0.001 * (i % 7) for i in range(200)])
    noisy = timing.summarize([0.5 + 0.2 * (i % 7) for i in range(200)])
    fast = timing.summarize([0.5 + 0.0005 * (i % 7) for i in range(200)])
    low, high = timing.speedup_interval(steady, fast)
    assert low < timing.speedup(steady, fast) < high
    assert high - low < 0.01
    wide_low, wide_high = timing.speedup_interval(steady, noisy)
    assert wide_high - wide_low > 10 * (high - low)


def _counting_turn(seconds: float, calls: list) -> timing.Turn:
    def run():
        calls.append(1)
        end = timing.time.perf_counter() + seconds
        while timing.time.perf_counter() < end:
            pass

    return timing.Turn(run=run)


@pytest.mark.parametrize("ratio, interval, p, device, shown", [
    (0.80, [0.75, 0.85], 1.0, "cpu", True),  # clear of p and of the CPU's resolution
    (0.95, [0.94, 0.96], 1.0, "cpu", False),  # clear of p, within the CPU's run-to-run 7%
    (0.95, [0.94, 0.96], 1.0, "cuda:0", True),  # beyond the GPU's 3%
    (0.80, [0.60, 1.10], 1.0, "cpu", False),  # the interval holds p
    (0.80, [0.0, math.inf], 1.0, "cpu", False),  # too few calls for an interval
    (1.00, None, 1.4, "cpu", True),  # the harness's clock set it, 40% below p
    (1.20, None, 1.4, "cpu", False),  # within a burst's 25%
])
def test_a_speedup_is_shown_below_p_only_beyond_the_devices_resolution(ratio, interval, p,
                                                                        device, shown):
    assert timing.below(ratio, interval, p, device) is shown
    if not shown:
        assert timing.resolution_words(ratio, interval, p, device)


@pytest.mark.parametrize("reported, baseline, candidate, verdict, clock", [
    # honest, on a CPU whose bursts are 2x apart: the fastest of each side recur
    (1.0, [0.50, 0.87, 0.49, 0.98], [0.49, 1.34, 0.51, 0.77], "stands", 1.0),
    # a shifted clock reporting 1.8x what the bursts see
    (1.8, [0.50, 0.51, 0.70], [0.50, 0.90, 0.505], "replaced", 1.0),
    # a busy host: neither side's fastest burst has come again
    (1.8, [0.50, 0.80, 0.75], [0.35, 0.60, 0.55], "undecided", None),
])
def test_bursts_confirm_replace_or_leave_a_reported_speedup_undecided(reported, baseline,
                                                                      candidate, verdict, clock):
    said, ratio = timing.clock_verdict(reported, baseline, candidate, 1.25)
    assert said == verdict
    assert math.isnan(ratio) if clock is None else ratio == pytest.approx(clock, rel=0.05)


def test_timing_stops_once_the_target_rse_is_met_and_otherwise_spends_the_budget():
    calls: list = []
    precise = timing.measure_interleaved({"a": _counting_turn(2e-5, calls)}, "cpu", budget_s=5.0,
                                         min_rounds=5, target_rse=0.05, warmup_s=0.0)
    assert precise.stopped == "rse" and precise.rounds >= timing.RSE_MIN_ROUNDS
    assert len(precise.samples_s["a"]) == precise.rounds
    spent = timing.measure_interleaved({"a": _counting_turn(1e-4, [])}, "cpu", budget_s=0.05,
                                       min_rounds=3, target_rse=0.0, warmup_s=0.0)
    assert spent.stopped == "budget" and spent.rounds >= 3


def _jittered_turn(seconds: float, seed: int) -> timing.Turn:
    """Busy-waits seconds give or take 10%, so each median's RSE falls as rounds add up."""
    import random

    draw = random.Random(seed)

    def run():
        end = timing.time.perf_counter() + seconds * (1 + 0.1 * draw.uniform(-1, 1))
        while timing.time.perf_counter() < end:
            pass

    return timing.Turn(run=run)


def test_a_timing_whose_speedup_is_clear_of_every_threshold_stops_on_the_looser_error():
    clear = timing.measure_interleaved(
        {"baseline": _jittered_turn(2e-4, 1), "candidate": _jittered_turn(2e-5, 2)}, "cpu",
        budget_s=5.0, min_rounds=5, target_rse=0.005, warmup_s=0.0, thresholds=(0.0, 1.0, 2.0))
    assert clear.stopped == "decided"
    worse = max(timing.rse_of_median(s) for s in clear.samples_s.values())
    assert 0.005 < worse <= timing.DECIDED_RSE_FACTOR * 0.005
    # A threshold near whatever speedup it measures (every hundredth up to 20x): the full
    # precision, as without thresholds.
    near = timing.measure_interleaved(
        {"baseline": _jittered_turn(2e-4, 1), "candidate": _jittered_turn(2e-5, 2)}, "cpu",
        budget_s=5.0, min_rounds=5, target_rse=0.005, warmup_s=0.0,
        thresholds=[i / 100 for i in range(1, 2001)])
    assert near.stopped == "rse"


def test_decided_needs_both_sides_the_looser_error_and_every_threshold_outside_the_interval():
    fast = [1.0 + 0.001 * (i % 7) for i in range(200)]
    slow = [3.0 + 0.003 * (i % 7) for i in range(200)]
    both = {"baseline": slow, "candidate": fast}
    assert timing.decided(both, [0.0, 1.0], loose_rse=0.01)
    assert not timing.decided(both, [0.0, 1.0, 3.0], loose_rse=0.01)  # 3x is inside
    assert not timing.decided(both, [], loose_rse=0.01)
    assert not timing.decided({"candidate": fast}, [1.0], loose_rse=0.01)  # cached baseline
    noisy = {"baseline": slow, "candidate": [0.5 + 0.2 * (i % 7) for i in range(200)]}
    assert not timing.decided(noisy, [1.0], loose_rse=0.01)


def test_a_timing_for_upstreams_figure_stops_at_the_rounds_upstream_times():
    bounded = timing.measure_interleaved({"a": _counting_turn(1e-5, [])}, "cpu", budget_s=5.0,
                                         min_rounds=5, target_rse=0.0, warmup_s=0.0,
                                         max_rounds=30)
    assert bounded.stopped == "max_rounds" and bounded.rounds == 30
    assert len(bounded.samples_s["a"]) == 30
    at_least = timing.measure_interleaved({"a": _counting_turn(1e-5, [])}, "cpu", budget_s=5.0,
                                          min_rounds=40, target_rse=0.0, warmup_s=0.0,
                                          max_rounds=30)
    assert at_least.rounds == 40  # min_rounds is the user's floor, whatever bounds the rest


def test_turns_alternate_between_sides():
    order: list[str] = []
    turns = {name: timing.Turn(run=lambda name=name: order.append(name)) for name in ("a", "b")}
    timing.measure_interleaved(turns, "cpu", budget_s=0.0, min_rounds=4, warmup_s=0.0)
    assert order[-8:] == ["a", "b"] * 4


def test_warm_up_lasts_until_every_input_draw_has_an_output_held():
    order: list[str] = []
    turns = {"a": timing.Turn(run=lambda: order.append("a"))}
    measured = timing.measure_interleaved(turns, "cpu", budget_s=0.0, min_rounds=1, warmup_s=0.0)
    assert len(order) - measured.rounds == timing.WARMUP_MIN_ROUNDS


def test_a_rotating_side_refills_the_same_buffers_with_each_draw():
    sets = [[torch.full((4,), float(k))] for k in range(3)]
    seen = []
    side = timing.RotatingSide(lambda x: x.clone(), sets, graph=False, device="cpu")
    pointer = side.buffers[0].data_ptr()
    for _ in range(4):
        side.prepare()
        seen.append(float(side.call()[0]))
        assert side.buffers[0].data_ptr() == pointer
    assert seen == [1.0, 2.0, 0.0, 1.0]


def test_poison_overwrites_every_tensor_of_an_output():
    out = (torch.ones(3), [torch.ones(2, dtype=torch.int64)])
    timing.poison(out)
    assert torch.isnan(out[0]).all() and (out[1][0] == -1).all()


FIELDS = {"problem": "abc", "gpu": "H200", "timing": "events"}


def test_cached_baselines_are_found_by_their_fields_and_go_stale(tmp_path):
    baselines.write(tmp_path, FIELDS, [1e-3, 2e-3], now=1000.0)
    assert baselines.read(tmp_path, FIELDS, max_age_s=60, now=1030.0) == [1e-3, 2e-3]
    assert baselines.read(tmp_path, FIELDS, max_age_s=60, now=1100.0) is None
    assert baselines.read(tmp_path, {**FIELDS, "gpu": "A100"}, max_age_s=60, now=1030.0) is None
    (tmp_path / f"{baselines.cache_key(FIELDS)}.json").write_text("{not json")
    assert baselines.read(tmp_path, FIELDS, max_age_s=60, now=1030.0) is None


def test_the_cost_of_a_matmul_counts_its_flops_and_the_bytes_it_must_move():
    model = torch.nn.Linear(64, 32, bias=False)
    cost = roofline.problem_cost(model, [torch.randn(16, 64)])
    assert cost.flops == 2 * 16 * 64 * 32
    assert cost.min_bytes == 4 * (16 * 64 + 16 * 32 + 64 * 32)


def test_the_speed_of_light_fraction_uses_the_binding_ceiling():
    ceilings = roofline.Ceilings(bytes_per_s=1e12, flops_per_s=1e14)
    memory_bound = roofline.Cost(flops=0, min_bytes=10**9)  # 1 ms at the copy ceiling
    assert roofline.fraction(memory_bound, 2e-3, ceilings) == pytest.approx(0.5)
    compute_bound = roofline.Cost(flops=10**12, min_bytes=10**6)  # 10 ms at the matmul ceiling
    assert roofline.fraction(compute_bound, 1e-2, ceilings) == pytest.approx(1.0)


def test_a_call_faster_than_a_ceiling_raises_it_so_no_fraction_passes_one():
    # On an H200 a Triton Swish moved its bytes at 4.07 TB/s where torch's copy read 3.83.
    ceilings = roofline.Ceilings(bytes_per_s=3.83e12, flops_per_s=5.1e13)
    swish = roofline.Cost(flops=0, min_bytes=805306368)
    assert roofline.fraction(swish, 198e-6, ceilings) > 1.05
    higher = roofline.raised(ceilings, swish, 198e-6)
    assert higher.bytes_per_s == pytest.approx(805306368 / 198e-6)
    assert higher.flops_per_s == ceilings.flops_per_s
    assert roofline.fraction(swish, 198e-6, higher) == pytest.approx(1.0)
    assert roofline.fraction(swish, 473e-6, higher) == pytest.approx(198 / 473)
    assert roofline.raised(higher, swish, 473e-6) == higher  # a slower call changes nothing


def test_measured_ceilings_are_positive_on_the_cpu():
    ceilings = roofline.measure_ceilings("cpu")
    assert ceilings.bytes_per_s > 1e8 and ceilings.flops_per_s > 1e8


@pytest.mark.parametrize(("source", "needed"), [
    ("from torch.utils.cpp_extension import load_inline\next = load_inline(name='x')", True),
    ("import torch.utils.cpp_extension as c\next = c.load(name='x', sources=['a.cu'])", True),
    ("import triton\n@triton.jit\ndef k(): pass", False),
])
def test_candidates_that_build_an_extension_are_recognised(source, needed):
    assert builds.needs_build(source) is needed


def test_build_folders_are_addressed_by_source_and_toolchain(tmp_path):
    tools = {"torch": "2.13", "arch": "9.0"}
    one = builds.build_folder(tmp_path, b"source a", tools)
    assert builds.build_folder(tmp_path, b"source a", dict(tools)) == one
    assert builds.build_folder(tmp_path, b"source b", tools) != one
    assert builds.build_folder(tmp_path, b"source a", {**tools, "arch": "8.0"}) != one
    assert builds.build_env(one, "9.0") == {"TORCH_EXTENSIONS_DIR": str(one),
                                            "TORCH_CUDA_ARCH_LIST": "9.0"}


def test_a_plan_builds_each_distinct_source_once_and_skips_finished_ones(tmp_path):
    source = "from torch.utils.cpp_extension import load_inline\n"
    files = []
    for name, text in [("a.py", source), ("b.py", source), ("c.py", source + "# other\n"),
                       ("d.py", "import torch\n")]:
        (tmp_path / name).write_text(text)
        files.append(tmp_path / name)
    planned = builds.plan(files, tmp_path / "cache", arch="")
    assert [b.candidate.name for b in planned] == ["a.py", "c.py"]
    planned[0].folder.mkdir(parents=True)
    (planned[0].folder / "ext.so").write_bytes(b"built")
    builds.seal(planned[0].folder, files[0])
    assert [b.status for b in builds.plan(files, tmp_path / "cache", arch="")] == ["cached",
                                                                                   "pending"]


def test_a_cpu_run_plans_no_build_for_a_cuda_only_candidate(tmp_path):
    build = "from torch.utils.cpp_extension import load_inline\n"
    sources = {"plain.py": build, "cuda_only.py": build + "x = torch.ones(1).cuda()\n"}
    cases = []
    for pid, (name, text) in enumerate(sources.items(), start=1):
        (tmp_path / name).write_text(text)
        problem = Problem(1, pid, f"P{pid}", tmp_path / f"{pid}_P{pid}.py")
        cases.append(Case(problem, "a", "s0", Candidate("a", 1, pid, "s0", tmp_path / name)))
    cases.append(Case(Problem(1, 3, "P3", tmp_path / "3_P3.py"), "a", "s0", None))
    on_cpu = builds.candidates_to_build(cases, "cpu")
    assert on_cpu == {tmp_path / "plain.py": tmp_path / "1_P1.py"}
    assert list(builds.candidates_to_build(cases, "cuda:0")) == [tmp_path / "plain.py",
                                                                 tmp_path / "cuda_only.py"]


def test_builds_share_the_cores_among_the_workers_unless_told_how_many():
    assert builds.build_jobs(3, processes=8) == 3
    assert builds.build_jobs(None, processes=10 ** 6) == 1


def test_a_cached_build_whose_library_changed_after_sealing_is_built_again(tmp_path):
    (tmp_path / "a.py").write_text("from torch.utils.cpp_extension import load_inline\n")
    folder = builds.plan([tmp_path / "a.py"], tmp_path / "cache", arch="")[0].folder
    folder.mkdir(parents=True)
    library = folder / "ext" / "ext.so"
    library.parent.mkdir()
    library.write_bytes(b"what the build made")
    builds.seal(folder, tmp_path / "a.py")
    assert builds.intact(folder)
    library.write_bytes(b"planted by someone else")
    replanned = builds.plan([tmp_path / "a.py"], tmp_path / "cache", arch="")[0]
    assert (replanned.status, replanned.message) == \
        ("pending", "its cached build had changed since it was built")
    assert not library.exists() and not (folder / builds.BUILT_MARKER).exists()


def test_replayed_outputs_must_agree_with_eager_ones():
    a = torch.arange(6.0)
    assert timing.outputs_agree((a, [a.long()]), (a + 1e-7, [a.long()]))
    assert not timing.outputs_agree(a, a + 1.0)
    assert not timing.outputs_agree(a.long(), a.long() + 1)
    assert not timing.outputs_agree(a, a.reshape(2, 3))
    assert timing.outputs_agree(torch.tensor([float("nan")]), torch.tensor([float("nan")]))


def test_a_build_another_worker_holds_is_left_to_it_and_awaited(tmp_path):
    import fcntl

    (tmp_path / "a.py").write_text("from torch.utils.cpp_extension import load_inline\n")
    planned = builds.plan([tmp_path / "a.py"], tmp_path / "cache", arch="")
    planned[0].folder.mkdir(parents=True)
    seen = []
    held = open(planned[0].folder / builds.LOCK_FILE, "a+")
    fcntl.flock(held, fcntl.LOCK_EX)
    threading.Timer(0.5, held.close).start()  # the other worker finishes half a second later
    started = time.perf_counter()
    pool = builds.BuildPool(planned, arch="", jobs=2, timeout_s=60,
                            on_done=lambda build, done, total, elapsed: seen.append((done, total)))
    pool.run()
    pool.wait_for(planned[0].folder)
    assert planned[0].status == "elsewhere" and seen == [(1, 1)]
    assert time.perf_counter() - started >= 0.4  # it waited for that build before returning


def test_a_source_that_failed_in_another_worker_after_the_plan_is_not_built_again(tmp_path):
    # Every xdist worker's pool plans all the builds: one that fails in the first worker's
    # pool must not run its compiler again in each of the others (and hold up the compile
    # item that waits for its folder meanwhile).
    candidate = tmp_path / "a.py"
    candidate.write_text("# load_inline\nimport time\ntime.sleep(30)\n")
    [build] = builds.plan([candidate], tmp_path / "cache", arch="")
    assert build.status == "pending"
    build.folder.mkdir(parents=True)
    (build.folder / builds.FAILED_MARKER).write_text("main.cpp:4:5: error: expected ';'")
    started = time.perf_counter()
    builds.BuildPool([build], arch="", jobs=1, timeout_s=60, on_done=lambda *_: None).run()
    assert build.status == "failed"
    assert build.message == "failed before: main.cpp:4:5: error: expected ';'"
    assert not (build.folder / builds.LOG_FILE).exists()  # no build process was started
    assert time.perf_counter() - started < 10


def test_a_build_an_item_waits_for_starts_at_once_while_the_others_queue(tmp_path):
    # "Builds" that take a second each (their import sleeps), one at a time: the item that
    # needs the last one gets it first, not after all the others.
    paths = []
    for name in ("a", "b", "c"):
        paths.append(tmp_path / f"{name}.py")
        paths[-1].write_text(f"# load_inline\nimport time\ntime.sleep(1.0)\nNAME = '{name}'\n")
    planned = builds.plan(paths, tmp_path / "cache", arch="")
    finished = []
    pool = builds.BuildPool(planned, arch="", jobs=1, timeout_s=60,
                            on_done=lambda build, *_: finished.append(build.candidate.name))
    pool.start()
    pool.wait_for(planned[2].folder)
    assert planned[2].status == "deferred" and "b.py" not in finished
    pool.close()
    assert finished.index("c.py") < finished.index("b.py")
    assert [build.status for build in planned] == ["deferred"] * 3


def test_a_build_lock_left_by_a_killed_build_holds_up_no_later_build(tmp_path):
    # torch waits for its build lock file to go away; one left by a build that was killed
    # would hold every later build of that extension (and the device lock of its item) forever.
    candidate = tmp_path / "a.py"
    candidate.write_text(
        "# load_inline\nimport os\nfrom torch.utils.file_baton import FileBaton\n"
        "baton = FileBaton(os.path.join(os.environ['TORCH_EXTENSIONS_DIR'], 'ext', 'lock'))\n"
        "if not baton.try_acquire():\n    baton.wait()\nbaton.release()\n")
    [build] = builds.plan([candidate], tmp_path / "cache", arch="")
    (build.folder / "ext").mkdir(parents=True)
    (build.folder / "ext" / builds.TORCH_BATON).write_text("")
    started = time.perf_counter()
    builds.BuildPool([build], arch="", jobs=1, timeout_s=30, on_done=lambda *_: None).run()
    assert build.status == "deferred", build.message  # imported, built nothing, not timed out
    assert time.perf_counter() - started < 25
    # The same where an item takes the folder.
    (build.folder / "ext" / builds.TORCH_BATON).write_text("")
    with builds.holding(build.folder):
        assert not (build.folder / "ext" / builds.TORCH_BATON).exists()
    assert (build.folder / builds.LOCK_FILE).exists()  # its own lock is not one of them


def test_only_a_compiler_failure_is_recorded_as_the_source_s_failed_build(tmp_path):
    folder = tmp_path / "build"
    folder.mkdir()
    no_gpu = builds.Build(tmp_path / "a.py", folder)
    (folder / builds.LOG_FILE).write_text("RuntimeError: No CUDA GPUs are available\n")
    builds._finish(no_gpu, returncode=1, overdue=False, timeout_s=60)
    assert no_gpu.status == "failed" and not (folder / builds.FAILED_MARKER).exists()
    compiler = builds.Build(tmp_path / "a.py", folder)
    transcript = "main.cpp:6:22: error: expected ';'\nninja: build stopped\n"
    (folder / builds.LOG_FILE).write_text(f"{transcript}{builds.failure_line(transcript)}\n")
    builds._finish(compiler, returncode=0, overdue=False, timeout_s=60)  # caught, fell back
    assert compiler.status == "failed"
    assert builds.failure(folder) == "main.cpp:6:22: error: expected ';'"
    # A marker line with no errors after it (an older echo's) falls back to the transcript.
    (folder / builds.FAILED_MARKER).unlink()
    (folder / builds.LOG_FILE).write_text(f"{builds.FAILED_LINE}:\n{transcript}")
    builds._finish(builds.Build(tmp_path / "a.py", folder), returncode=0, overdue=False,
                   timeout_s=60)
    assert builds.failure(folder) == "main.cpp:6:22: error: expected ';'"


def test_on_a_cuda_run_a_build_gated_on_a_gpu_happens_in_the_build_process(tmp_path):
    """Generated code often builds only `if torch.cuda.is_available()`, or only on a capability
    check; the build process of a CUDA run (no GPU visible) lets it believe in the GPU it builds
    for, so the build is done ahead."""
    import os
    import subprocess
    import sys

    candidate = tmp_path / "cand.py"
    candidate.write_text(
        "import torch\nimport torch.nn as nn\nfrom torch.utils.cpp_extension import load_inline\n"
        "SRC = '#include <torch/extension.h>\\ntorch::Tensor twice(torch::Tensor x) "
        "{ return x * 2; }'\n"
        "class ModelNew(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        if torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 9:\n"
        "            self.stream = torch.cuda.Stream()  # made before the build, as CUDA-L1's L2/10\n"
        "            torch.cuda.current_stream().wait_stream(self.stream)\n"
        "            self.ext = load_inline(name='kb_gated', cpp_sources=SRC, functions=['twice'])\n"
        "        torch.zeros(1, device='cuda')  # what needs a real GPU fails here, harmlessly\n")
    problem = tmp_path / "1_Twice.py"
    problem.write_text("import torch\nclass Model(torch.nn.Module):\n    pass\n"
                       "def get_inputs():\n    return [torch.randn(4)]\n"
                       "def get_init_inputs():\n    return []\n")
    env = {**os.environ, **builds.build_env(tmp_path / "ext", "9.0"), "CUDA_VISIBLE_DEVICES": ""}
    done = subprocess.run([sys.executable, "-m", "pytest_kernelbench.building.builds", str(candidate),
                           str(problem)], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert list((tmp_path / "ext").rglob("kb_gated*.so"))
    assert "constructing without a GPU" in done.stderr


def _first_call_files(tmp_path, forward: str):
    candidate = tmp_path / "cand.py"
    candidate.write_text(
        "import time\nfrom pathlib import Path\nimport torch\nimport torch.nn as nn\n"
        "from torch.utils.cpp_extension import load_inline\n"
        "SRC = '#include <torch/extension.h>\\ntorch::Tensor twice(torch::Tensor x) "
        "{ return x * 2; }'\n"
        "class ModelNew(nn.Module):\n"
        "    def forward(self, x):\n" + forward)
    problem = tmp_path / "1_Twice.py"
    problem.write_text("import torch\nclass Model(torch.nn.Module):\n    pass\n"
                       "def get_inputs():\n    return [torch.randn(4)]\n"
                       "def get_init_inputs():\n    return []\n")
    return candidate, problem


def test_a_build_at_the_first_call_happens_in_the_build_process_and_nothing_after_it(tmp_path):
    import os
    import subprocess
    import sys

    # Gated as generated code often is; on a CUDA run the inputs say they are on the GPU.
    candidate, problem = _first_call_files(tmp_path, (
        "        if not (x.is_cuda and x.device.type == 'cuda'):\n"
        "            return x * 2\n"
        "        ext = load_inline(name='kb_first', cpp_sources=SRC, functions=['twice'])\n"
        f"        Path({str(tmp_path / 'after')!r}).write_text('ran')\n"
        "        return ext.twice(x)\n"))
    env = {**os.environ, **builds.build_env(tmp_path / "ext", "9.0"), "CUDA_VISIBLE_DEVICES": ""}
    done = subprocess.run([sys.executable, "-m", "pytest_kernelbench.building.builds", str(candidate),
                           str(problem)], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert list((tmp_path / "ext").rglob("kb_first*.so")) and "first call: built" in done.stderr
    assert not (tmp_path / "after").exists()  # the call stopped once the build was over


def test_a_first_call_that_makes_its_output_on_the_gpu_before_building_builds_ahead(tmp_path):
    import os
    import subprocess
    import sys

    # As CUDA-L1's L2/4 and L2/67: the output is made on the input's device, then the build.
    candidate, problem = _first_call_files(tmp_path, (
        "        if not x.is_cuda:\n"
        "            return x * 2\n"
        "        out = torch.empty(x.shape, device=x.device, dtype=x.dtype)\n"
        "        with torch.cuda.stream(torch.cuda.Stream()):\n"
        "            x = x.cuda().to('cuda', non_blocking=True)\n"
        "        ext = load_inline(name='kb_made_first', cpp_sources=SRC, functions=['twice'])\n"
        "        return out.copy_(ext.twice(x))\n"))
    env = {**os.environ, **builds.build_env(tmp_path / "ext", "9.0"), "CUDA_VISIBLE_DEVICES": ""}
    done = subprocess.run([sys.executable, "-m", "pytest_kernelbench.building.builds", str(candidate),
                           str(problem)], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert list((tmp_path / "ext").rglob("kb_made_first*.so")), done.stderr


def test_under_the_build_process_stand_in_what_asks_for_the_gpu_stays_on_the_cpu():
    import torch

    from pytest_kernelbench.building import gpu_stand_ins

    with gpu_stand_ins.cuda_on_cpu():
        made = [torch.zeros(2, device="cuda"), torch.empty(2, device=torch.device("cuda", 0)),
                torch.ones(2, device=0), torch.zeros_like(torch.ones(2), device="cuda:0")]
        x = torch.ones(3)
        moved = [x.cuda(), x.to("cuda"), x.to(torch.device("cuda"), non_blocking=True),
                 x.to(0), x.pin_memory()]
        assert torch.arange(3, device="cuda").sum().item() == 3
    assert all(t.device.type == "cpu" for t in made + moved)
    assert all(t is x for t in moved[:1] + moved[4:])


def test_a_first_call_that_builds_nothing_is_cut_off(tmp_path):
    import subprocess
    import sys

    candidate, problem = _first_call_files(tmp_path, "        time.sleep(600)\n")
    script = ("import sys; from pathlib import Path; from pytest_kernelbench.building import builds\n"
              "from pytest_kernelbench.suite.loading import import_file\n"
              "module = import_file(Path(sys.argv[1]), 'kb_build')\n"
              "model, problem = builds.construct(module, Path(sys.argv[2]))\n"
              "builds.first_call(model, problem, seems_cuda=False, limit_s=0.5)\n")
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", script, str(candidate), str(problem)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "nothing built within 0.5 s" in done.stderr, done.stderr
    assert time.perf_counter() - started < 60


def test_a_cuda_call_is_timed_from_an_idle_gpu_after_the_flush():
    # The start event is recorded only once the L2 flush is done, so the events bracket the
    # call as its host runs it (launches included) and never part of the flush: the order of
    # the timer's calls is what decides that, read here through a stand-in for torch.
    seen: list[str] = []

    class Event:
        def __init__(self, name):
            self.name = name

        def record(self, stream):
            seen.append(self.name)

        def elapsed_time(self, other):
            return 2.0

    cuda = SimpleNamespace(current_stream=lambda device: "stream",
                           synchronize=lambda device: seen.append("synchronize"))
    timer = object.__new__(timing._CudaTimer)
    timer.torch, timer.device = SimpleNamespace(cuda=cuda), "cuda:0"
    timer.flush = SimpleNamespace(zero_=lambda: seen.append("flush"))
    timer.start, timer.end = Event("start"), Event("end")
    seconds, output = timer.time(lambda: seen.append("call") or "out")
    assert (seconds, output) == (2e-3, "out")
    assert seen == ["flush", "synchronize", "start", "call", "end", "synchronize"]
