"""building/builds.py: build folders and their addressing, the plan; building/pool.py, the build
pool, given a fixed list or one build at a time; building/process.py, the build process (a
subprocess of its own, with no GPU visible), and building/gpu_stand_ins.py beside it."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from pytest_kernelbench.building import builds, guard, pch, pool
from pytest_kernelbench.suite.discovery import Candidate, Case, Problem


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


def test_a_build_another_worker_holds_is_left_to_it_and_awaited(tmp_path):
    import fcntl

    (tmp_path / "a.py").write_text("from torch.utils.cpp_extension import load_inline\n")
    planned = builds.plan([tmp_path / "a.py"], tmp_path / "cache", arch="")
    planned[0].folder.mkdir(parents=True)
    seen = []
    held = open(planned[0].folder / builds.LOCK_FILE, "a+")
    fcntl.flock(held, fcntl.LOCK_EX)

    def done(build, done, total, elapsed):
        seen.append((done, total))
        threading.Timer(0.5, held.close).start()  # the other worker finishes 0.5 s later

    building = pool.BuildPool(planned, arch="", jobs=2, timeout_s=60, on_done=done)
    building.run()
    started = time.perf_counter()
    building.wait_for(planned[0].folder)
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
    pool.BuildPool([build], arch="", jobs=1, timeout_s=60, on_done=lambda *_: None).run()
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
    building = pool.BuildPool(planned, arch="", jobs=1, timeout_s=60,
                              on_done=lambda build, *_: finished.append(build.candidate.name))
    building.start()
    building.wait_for(planned[2].folder)
    assert planned[2].status == "deferred" and "b.py" not in finished
    building.close()
    assert finished.index("c.py") < finished.index("b.py")
    assert [build.status for build in planned] == ["deferred"] * 3


def test_a_pool_without_headers_makes_none_and_tells_no_build_of_one(tmp_path):
    # --kb-build-headers=off: three candidates share a header command (pch.planned_commands),
    # yet no header is compiled and no build process is pointed at a header folder.
    paths = []
    for name in ("a", "b", "c"):
        paths.append(tmp_path / f"{name}.py")
        paths[-1].write_text(
            "import os\nfrom torch.utils.cpp_extension import load_inline\n\n"
            "def never():\n    load_inline(name='e', cpp_sources='', extra_cflags=['-O2'])\n\n"
            f"open({str(tmp_path / (name + '.env'))!r}, 'w').write("
            f"os.environ.get({pch.ROOT_ENV!r}, 'unset'))\n")
    assert pch.planned_commands(path.read_text() for path in paths)
    planned = builds.plan(paths, tmp_path / "cache", arch="")
    pool.BuildPool(planned, arch="", jobs=3, timeout_s=60, headers=None).run()
    assert [build.status for build in planned] == ["deferred"] * 3
    assert [(tmp_path / f"{name}.env").read_text() for name in "abc"] == ["unset"] * 3
    assert not (tmp_path / "cache" / builds.HEADERS_FOLDER).exists()


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
    pool.BuildPool([build], arch="", jobs=1, timeout_s=30, on_done=lambda *_: None).run()
    assert build.status == "deferred", build.message  # imported, built nothing, not timed out
    assert time.perf_counter() - started < 25
    # The same where an item takes the folder.
    (build.folder / "ext" / builds.TORCH_BATON).write_text("")
    with builds.holding(build.folder):
        assert not (build.folder / "ext" / builds.TORCH_BATON).exists()
    assert (build.folder / builds.LOCK_FILE).exists()  # its own lock is not one of them


@pytest.fixture
def private_notices(tmp_path, monkeypatch):
    """This test's host notices (compilers announced, timings under way) in its own folder:
    another suite on the same host must neither hold nor see them."""
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("TMPDIR", str(tmp_path))


def _sleeping_build(tmp_path, name: str, seconds: float) -> builds.Build:
    """A planned "build" whose import sleeps (its source names load_inline): a build process
    that compiles nothing, running for as long as a test needs one."""
    path = tmp_path / f"{name}.py"
    path.write_text(f"# load_inline\nimport time\ntime.sleep({seconds})\nNAME = '{name}'\n")
    [build] = builds.plan([path], tmp_path / "cache", arch="")
    return build


def _until(condition, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "gave up waiting"
        time.sleep(0.02)


def _alive(pid: int) -> bool:
    """Whether a process runs (a zombie, killed and not yet reaped by its parent, does not)."""
    return _state(pid) not in ("Z", "X", None)


def _state(pid: int) -> str | None:
    """A process's state letter from /proc (None: gone)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return None


def test_an_open_ended_pool_builds_what_is_added_after_it_started(tmp_path, torch_headers,
                                                                  private_notices):
    candidate = tmp_path / "cand.py"
    candidate.write_text(
        "from torch.utils.cpp_extension import load_inline\n"
        "SRC = '#include <torch/extension.h>\\ntorch::Tensor twice(torch::Tensor x) "
        "{ return x * 2; }'\n"
        "ext = load_inline(name='kb_added', cpp_sources=SRC, functions=['twice'])\n")
    torch_headers.folder()  # the session's precompiled header: a compile of seconds
    finished = []
    building = pool.BuildPool([], arch="", jobs=1, timeout_s=300, headers=torch_headers.root,
                              on_done=lambda build, done, total, _: finished.append(
                                  (build.status, done, total)), open_ended=True).start()
    time.sleep(0.3)
    assert building._thread.is_alive()  # an empty queue does not end it
    [build] = builds.plan([candidate], tmp_path / "cache", arch="")
    assert building.add(build) is build
    assert build.status in ("pending", "running")
    building.wait_for(build.folder)
    assert build.status == "built", (build.folder / builds.LOG_FILE).read_text()
    assert list(build.folder.rglob("kb_added*.so")) and finished == [("built", 1, 1)]
    building.close()
    assert not building._thread.is_alive()


def test_two_adds_of_one_source_share_one_build(tmp_path, private_notices):
    for name in ("a", "b"):
        (tmp_path / f"{name}.py").write_text("# load_inline\nNAME = 'the same source'\n")
    [first] = builds.plan([tmp_path / "a.py"], tmp_path / "cache", arch="")
    [second] = builds.plan([tmp_path / "b.py"], tmp_path / "cache", arch="")
    assert first.folder == second.folder and first is not second
    cached = builds.Build(tmp_path / "c.py", tmp_path / "cache" / "c", status="cached")
    finished = []
    building = pool.BuildPool([], arch="", jobs=2, timeout_s=60, open_ended=True,
                              on_done=lambda build, done, total, _: finished.append(
                                  (build.candidate.name, done, total))).start()
    assert building.add(first) is first and building.add(second) is first
    assert building.add(cached) is cached  # recorded, with nothing to build
    building.wait_for(second.folder)
    building.close()
    assert first.status == "deferred" and second.status == "pending"
    assert cached.status == "cached"
    assert finished == [("a.py", 1, 1)]


def test_a_build_nobody_started_is_dropped_and_a_running_one_runs_on(tmp_path, private_notices):
    running, queued = _sleeping_build(tmp_path, "a", 1.0), _sleeping_build(tmp_path, "b", 0)
    finished = []
    building = pool.BuildPool([], arch="", jobs=1, timeout_s=60, open_ended=True,
                              on_done=lambda build, *_: finished.append(build.candidate.name))
    building.start()
    building.add(running)
    building.add(queued)
    _until(lambda: running.status == "running")
    assert queued.status == "pending"  # one at a time
    assert building.drop(queued.folder) and queued.status == "cancelled"
    assert not building.drop(running.folder) and not building.drop(queued.folder)
    building.close()
    assert running.status == "deferred" and finished == ["a.py"]
    assert not (queued.folder / builds.LOG_FILE).exists()  # no build process was started


def test_stopping_an_open_ended_pool_leaves_no_build_process_behind(tmp_path, private_notices):
    pids = tmp_path / "pids"
    candidate = tmp_path / "a.py"
    # A "build" that starts a "compiler" of its own, says both their pids, and waits.
    candidate.write_text(
        "# load_inline\nimport os, subprocess, sys, time\n"
        "compiler = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
        f"with open({str(pids)!r} + '.part', 'w') as out:\n"
        "    out.write(f'{os.getpid()} {compiler.pid}')\n"
        f"os.replace({str(pids)!r} + '.part', {str(pids)!r})\n"
        "time.sleep(600)\n")
    [build] = builds.plan([candidate], tmp_path / "cache", arch="")
    queued = _sleeping_build(tmp_path, "b", 0)
    building = pool.BuildPool([], arch="", jobs=1, timeout_s=600, open_ended=True).start()
    building.add(build)
    building.add(queued)
    _until(pids.exists)
    started = [int(pid) for pid in pids.read_text().split()]
    assert all(_alive(pid) for pid in started)
    building.close(stop=True)
    assert not building._thread.is_alive()
    _until(lambda: not any(_alive(pid) for pid in started), timeout_s=5)
    assert build.status == "failed" and queued.status == "pending"
    assert not (queued.folder / builds.LOG_FILE).exists()  # the queue went with the stop
    with pytest.raises(RuntimeError):
        building.add(_sleeping_build(tmp_path, "c", 0))


def test_an_open_ended_pool_ends_at_close_and_says_compilers_run_only_while_it_builds(
        tmp_path, private_notices):
    from pytest_kernelbench.gpu import devices

    first, second = _sleeping_build(tmp_path, "a", 0.5), _sleeping_build(tmp_path, "b", 0.5)
    building = pool.BuildPool([], arch="", jobs=1, timeout_s=60, open_ended=True).start()
    time.sleep(0.3)
    assert building._thread.is_alive() and not devices.compilers_may_run()  # idle, silent
    building.add(first)
    _until(lambda: first.status == "running")
    assert devices.compilers_may_run()
    building.wait_for(first.folder)
    _until(lambda: not devices.compilers_may_run(), timeout_s=5)  # idle again
    assert building._thread.is_alive()
    building.add(second)
    building.close()  # waits for the build added last
    assert second.status == "deferred" and not building._thread.is_alive()
    assert not devices.compilers_may_run()
    with pytest.raises(RuntimeError):
        building.add(_sleeping_build(tmp_path, "c", 0))


def test_only_a_compiler_failure_is_recorded_as_the_source_s_failed_build(tmp_path):
    folder = tmp_path / "build"
    folder.mkdir()
    no_gpu = builds.Build(tmp_path / "a.py", folder)
    (folder / builds.LOG_FILE).write_text("RuntimeError: No CUDA GPUs are available\n")
    builds.finish(no_gpu, returncode=1, overdue=False, timeout_s=60)
    assert no_gpu.status == "failed" and not (folder / builds.FAILED_MARKER).exists()
    compiler = builds.Build(tmp_path / "a.py", folder)
    transcript = "main.cpp:6:22: error: expected ';'\nninja: build stopped\n"
    (folder / builds.LOG_FILE).write_text(f"{transcript}{builds.failure_line(transcript)}\n")
    builds.finish(compiler, returncode=0, overdue=False, timeout_s=60)  # caught, fell back
    assert compiler.status == "failed"
    assert builds.failure(folder) == "main.cpp:6:22: error: expected ';'"
    # A marker line with no errors after it (an older echo's) falls back to the transcript.
    (folder / builds.FAILED_MARKER).unlink()
    (folder / builds.LOG_FILE).write_text(f"{builds.FAILED_LINE}:\n{transcript}")
    builds.finish(builds.Build(tmp_path / "a.py", folder), returncode=0, overdue=False,
                   timeout_s=60)
    assert builds.failure(folder) == "main.cpp:6:22: error: expected ';'"


def cuda_build_env(folder, torch_headers) -> dict:
    """A CUDA run's build process environment, with the session's precompiled torch header."""
    import os

    torch_headers.folder()
    return {**os.environ, **builds.build_env(folder, "9.0"), "CUDA_VISIBLE_DEVICES": "",
            pch.ROOT_ENV: str(torch_headers.root)}


def test_on_a_cuda_run_a_build_gated_on_a_gpu_happens_in_the_build_process(tmp_path, torch_headers):
    """Generated code often builds only `if torch.cuda.is_available()`, or only on a capability
    check; the build process of a CUDA run (no GPU visible) lets it believe in the GPU it builds
    for, so the build is done ahead."""
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
    env = cuda_build_env(tmp_path / "ext", torch_headers)
    done = subprocess.run([sys.executable, "-m", "pytest_kernelbench.building.process", str(candidate),
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


def test_a_build_at_the_first_call_happens_in_the_build_process_and_nothing_after_it(tmp_path, torch_headers):
    import subprocess
    import sys

    # Gated as generated code often is; on a CUDA run the inputs say they are on the GPU.
    candidate, problem = _first_call_files(tmp_path, (
        "        if not (x.is_cuda and x.device.type == 'cuda'):\n"
        "            return x * 2\n"
        "        ext = load_inline(name='kb_first', cpp_sources=SRC, functions=['twice'])\n"
        f"        Path({str(tmp_path / 'after')!r}).write_text('ran')\n"
        "        return ext.twice(x)\n"))
    env = cuda_build_env(tmp_path / "ext", torch_headers)
    done = subprocess.run([sys.executable, "-m", "pytest_kernelbench.building.process", str(candidate),
                           str(problem)], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert list((tmp_path / "ext").rglob("kb_first*.so")) and "first call: built" in done.stderr
    assert not (tmp_path / "after").exists()  # the call stopped once the build was over


def test_a_first_call_that_makes_its_output_on_the_gpu_before_building_builds_ahead(tmp_path, torch_headers):
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
    env = cuda_build_env(tmp_path / "ext", torch_headers)
    done = subprocess.run([sys.executable, "-m", "pytest_kernelbench.building.process", str(candidate),
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
    script = ("import sys; from pathlib import Path; from pytest_kernelbench.building import process\n"
              "from pytest_kernelbench.suite.loading import import_file\n"
              "module = import_file(Path(sys.argv[1]), 'kb_build')\n"
              "model, problem = process.construct(module, Path(sys.argv[2]))\n"
              "process.first_call(model, problem, seems_cuda=False, limit_s=0.5)\n")
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", script, str(candidate), str(problem)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "nothing built within 0.5 s" in done.stderr, done.stderr
    assert time.perf_counter() - started < 60


def test_a_builds_compiler_steps_are_read_from_ninjas_log(tmp_path):
    log = tmp_path / "kb_ext" / ".ninja_log"
    log.parent.mkdir()
    log.write_text("# ninja log v5\n"
                   "0\t20000\t1\tmain.o\tab\n"
                   "0\t30000\t1\tcuda.cuda.o\tcd\n"
                   "30000\t31500\t1\tkb_ext.so\tef\n")
    assert builds.compiler_seconds(tmp_path) == {"cxx_s": 20.0, "nvcc_s": 30.0, "link_s": 1.5,
                                                 "ninja_s": 31.5}
    # A step ninja ran again counts once, at its last line.
    log.write_text(log.read_text() + "0\t1000\t2\tmain.o\tab\n")
    assert builds.compiler_seconds(tmp_path)["cxx_s"] == 1.0
    assert builds.compiler_seconds(tmp_path / "kb_ext" / "none") == {}


def test_the_pools_compilers_are_no_more_than_the_cores(monkeypatch):
    monkeypatch.delenv("MAX_JOBS", raising=False)
    monkeypatch.setattr(builds.os, "cpu_count", lambda: 16)
    assert builds.compiler_jobs(jobs=2, processes=8) == 1
    assert builds.compiler_jobs(jobs=4, processes=1) == 4
    assert builds.compiler_jobs(jobs=32, processes=1) == 1
    monkeypatch.setenv("MAX_JOBS", "3")  # the user's own
    assert builds.compiler_jobs(jobs=2, processes=8) == 3


def test_split_builds_are_sized_to_the_cores_the_timings_leave(monkeypatch):
    # 16 cores, 4 kept for two GPUs' timings: 12 for the builds of 4 processes
    monkeypatch.delenv("MAX_JOBS", raising=False)
    monkeypatch.setattr(builds.os, "cpu_count", lambda: 16)
    assert builds.build_jobs(None, processes=4, cores=12) == 3
    assert builds.compiler_jobs(jobs=3, processes=4, cores=12) == 1
    assert builds.build_jobs(None, processes=4) == 4


GUARDED_POOL = """
import signal, subprocess, sys, time
from pytest_kernelbench.building.guard import Guard
build = subprocess.Popen(["sleep", "600"], start_new_session=True)
guard = Guard()
guard.track([build.pid])
build.send_signal(signal.SIGSTOP)  # as a timing stops the builds
print(build.pid, flush=True)
time.sleep(600)
"""


def test_a_build_stopped_for_a_timing_dies_with_a_pool_process_killed_outright():
    pool = subprocess.Popen([sys.executable, "-c", GUARDED_POOL], stdout=subprocess.PIPE,
                            text=True)
    assert pool.stdout is not None
    build = int(pool.stdout.readline())
    _until(lambda: _state(build) == "T", timeout_s=30)  # stopped
    pool.kill()  # SIGKILL: no handler of the pool's runs
    pool.wait()
    _until(lambda: not _alive(build), timeout_s=30)


def test_the_guard_kills_only_the_groups_still_named_at_the_end():
    assert guard.watch(["+10\n", "+11\n", "-10\n", "garbage\n", "+12"]) == {11, 12}


def test_an_open_ended_pool_starts_a_header_once_enough_added_builds_share_it(
        tmp_path, private_notices, monkeypatch):
    asked = []
    monkeypatch.setattr(pch, "start", lambda root, command, niceness: asked.append(command))
    source = ("import time\ndef never():\n"
              "    load_inline(name='x', cpp_sources='', extra_cflags=['-O3'])\n")
    building = pool.BuildPool([], arch="", jobs=1, timeout_s=60, open_ended=True,
                              headers=tmp_path / "headers").start()
    added = []
    for name in "abc":
        path = tmp_path / f"{name}.py"
        path.write_text(f"{source}NAME = '{name}'\n")
        [build] = builds.plan([path], tmp_path / "cache", arch="")
        added.append(building.add(build))
        building.wait_for(build.folder)
        if name != "c":
            assert asked == []  # too few share it yet
    building.close()
    assert len(asked) == 1 and "-O3" in asked[0]
    assert all(build.status == "deferred" for build in added)
