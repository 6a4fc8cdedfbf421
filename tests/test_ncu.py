"""--kb-profile: Nsight Compute's table read into per-kernel figures, and the process that runs
under ncu (here under a stand-in for ncu, which runs the same command and writes a table)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from pytest_kernelbench import confine
from pytest_kernelbench.isolation import ncu, wire
from pytest_kernelbench.isolation.sandbox import Sandbox
from pytest_kernelbench.reporting import feedback

EXAMPLES = Path(__file__).parent / "examples"
RELU = EXAMPLES / "problems" / "level1" / "2_ReLU.py"
GOOD = EXAMPLES / "candidates" / "good" / "level1" / "2_ReLU.py"
FORWARD_ERROR = EXAMPLES / "candidates" / "broken" / "level1" / "2_ReLU" / "forward_error.py"

# ncu --csv --page raw --print-units base, as it writes its log: its own lines, a header, a
# row of units, a row per kernel.
COLUMNS = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream",
           "Block Size", "Grid Size", "Device", "CC",
           "dram__throughput.avg.pct_of_peak_sustained_elapsed",
           "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
           "gpu__time_duration.sum", "launch__registers_per_thread",
           "sm__throughput.avg.pct_of_peak_sustained_elapsed",
           "sm__warps_active.avg.pct_of_peak_sustained_active"]
UNITS = [""] * 11 + ["%", "%", "ns", "register/thread", "%", "%"]
FILL = ["0", "4242", "python3.12", "127.0.0.1",
        "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>"
        "(int, at::native::FillFunctor<float>, std::array<char *, 1>)", "1", "7", "(128, 1, 1)",
        "(1056, 1, 1)", "0", "9.0", "81.5", "81.5", "3,104", "16", "10.2", "71.4"]
SOFTSIGN = ["1", "4242", "python3.12", "127.0.0.1", "softsign_vec4(const float4 *, float4 *, long)",
            "1", "7", "(256, 1, 1)", "(4224, 1, 1)", "0", "9.0", "88.9", "89.1", "215,392", "22",
            "35.7", "83.0"]


def _row(cells: list[str]) -> str:
    return ",".join(f'"{cell}"' for cell in cells)


TABLE = "\n".join([
    "==PROF== Connected to process 4242 (/usr/bin/python3.12)",
    '==PROF== Profiling "softsign_vec4": 0%....50%....100% - 9 passes',
    _row(COLUMNS), _row(UNITS), _row(FILL), _row(SOFTSIGN),
    "==PROF== Disconnected from process 4242", ""])
OWN = ["softsign_vec4(float4 const*, float4*, long)"]


def test_the_table_becomes_one_entry_per_kernel_in_seconds_with_its_own_kernels_marked():
    fill, softsign = ncu.parse(TABLE, OWN)
    assert softsign["kernel"].startswith("softsign_vec4") and softsign["own"]
    assert not fill["own"]
    assert softsign["duration_s"] == pytest.approx(215.392e-6)
    assert fill["duration_s"] == pytest.approx(3.104e-6)
    assert (softsign["memory_throughput_pct"], softsign["dram_throughput_pct"],
            softsign["sm_throughput_pct"], softsign["achieved_occupancy_pct"],
            softsign["registers_per_thread"]) == (89.1, 88.9, 35.7, 83.0, 22.0)
    assert softsign["grid"] == "(4224, 1, 1)" and softsign["block"] == "(256, 1, 1)"


def test_a_table_without_kernels_reads_as_none_and_a_foreign_one_is_refused():
    assert ncu.parse("==PROF== Disconnected from process 1\n", OWN) == []
    with pytest.raises(ValueError, match="Kernel Name"):
        ncu.parse('"ID","Name"\n"",""\n"0","x"\n', OWN)


def test_feedback_shows_the_own_kernels_first_with_their_figures():
    record = {"level": 1, "problem_id": 30, "problem": "Softsign", "candidate_set": "examples",
              "sample": "30_Softsign", "status": "passed", "compiled": True, "correct": True,
              "speedup": 1.56, "candidate_time": 215e-6, "baseline_time": 337e-6,
              "ncu_kernels": ncu.parse(TABLE, OWN), "ncu_error": None}
    info = feedback.feedback(record, p=1.0)
    assert [k["own"] for k in info["kernels"]] == [False, True]
    text = feedback.render(info).splitlines()
    at = text.index("Nsight Compute, one call:")
    assert text[at + 1] == ("  own softsign_vec4: 215.4 us, memory 89%, DRAM 89%, SM 36%, "
                            "occupancy 83%, 22 registers/thread")
    assert text[at + 2].startswith("  library vectorized_elementwise_kernel: 3.1 us")
    record.update(ncu_kernels=None, ncu_error="ncu did not finish within 300 s")
    assert "no Nsight Compute figures: ncu did not finish within 300 s" in \
        feedback.render(feedback.feedback(record, p=1.0))


def test_ncu_starts_with_profiling_off_and_runs_this_module_on_the_request():
    line = ncu.command("/opt/ncu", Path("/tmp/log.csv"), Path("/tmp/request.json"))
    assert line[:3] == ["/opt/ncu", "--profile-from-start", "off"]
    assert ",".join(ncu.METRICS.values()) in line
    assert line[-4:] == [sys.executable, "-m", "pytest_kernelbench.isolation.ncu", "/tmp/request.json"]


STAND_IN = f"""#!{sys.executable}
# Runs the profiled command as ncu would and writes the table ncu would write.
import subprocess, sys
args = sys.argv[1:]
log = args[args.index("--log-file") + 1]
target = args[args.index({sys.executable!r}):]
done = subprocess.run(target)
open(log, "w").write({TABLE!r})
sys.exit(done.returncode)
"""


@pytest.fixture
def stand_in_ncu(tmp_path, monkeypatch):
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "ncu").write_text(STAND_IN)
    (folder / "ncu").chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    return folder / "ncu"


def _request(sandbox: Sandbox, candidate: Path, scratch: Path) -> wire.Ncu:
    loading = wire.Loading(problem=str(RELU), candidate=str(candidate), seed=42, device="cpu",
                           mode="train", precision="fp32", tf32="off")
    return sandbox.profiled(wire.Ncu(loading, input_seed=1042), scratch)


@pytest.mark.parametrize("mode", ["off", "auto"])
def test_the_candidate_runs_in_a_process_of_its_own_under_ncu(tmp_path, stand_in_ncu, mode):
    if mode == "auto" and not confine.landlock_abi():
        pytest.skip("this kernel offers no Landlock")
    assert ncu.find_ncu() == str(stand_in_ncu)
    sandbox = Sandbox(device="cpu", confine_mode=mode, protected=(tmp_path / "others",))
    try:
        request = _request(sandbox, GOOD, tmp_path)
        assert (request.policy is None) == (mode == "off")
        kernels, why = ncu.profile(request, sandbox.env, OWN, 120.0, tmp_path)
        assert why == "" and [k["own"] for k in kernels] == [False, True]
        # The candidate's own error comes back as the reason, from its process under ncu.
        kernels, why = ncu.profile(_request(sandbox, FORWARD_ERROR, tmp_path), sandbox.env,
                                   OWN, 120.0, tmp_path)
        assert kernels is None
        assert why.startswith("ncu exited with 2: runtime_error:"), why
        assert "kernel launch failed: bad grid" in why
    finally:
        sandbox.close()


def test_profile_on_the_cpu_is_a_usage_error(kb):
    result = kb.run("good", args=("--kb-device=cpu", "--kb-profile"))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--kb-profile: Nsight Compute profiles CUDA kernels; the "
                                 "device is cpu*"])
