"""CUPTI's kernel records as cupti.py reads them: the name field's place against the header,
the library it loads, and the trace's handling of refusals and lost records, over a stand-in
library (the traces themselves run on the GPU: benchmarks/attribution_check.py)."""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from pytest_kernelbench.gpu import cupti, kernels

RECORD_BYTES = 216  # CUpti_ActivityKernel10


class StandInCupti:
    """The few CUPTI calls a trace makes. Each flush hands back one buffer holding the records
    `kernels` (raw names; None for a record of another kind), and reports `dropped` lost."""

    def __init__(self, kernels: list[bytes | None], dropped: int = 0, refuse: dict | None = None):
        self.kernels, self.dropped, self.refuse = kernels, dropped, refuse or {}
        self.enabled: list[int] = []
        self.keep: list = []

    def _result(self, call: str) -> int:
        return self.refuse.get(call, cupti.SUCCESS)

    def cuptiGetResultString(self, result, text) -> int:
        text._obj.value = b"CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"
        return cupti.SUCCESS

    def cuptiActivityRegisterCallbacks(self, request, complete) -> int:
        self.request, self.complete = request, complete
        return self._result("register")

    def cuptiActivityEnable(self, kind) -> int:
        self.enabled.append(kind)
        return self._result("enable")

    def cuptiActivityDisable(self, kind) -> int:
        self.enabled.remove(kind)
        return cupti.SUCCESS

    def cuptiActivityFlushAll(self, flag) -> int:
        buffer, size, most = ctypes.c_void_p(), ctypes.c_size_t(), ctypes.c_size_t()
        self.request(ctypes.byref(buffer), ctypes.byref(size), ctypes.byref(most))
        assert size.value >= RECORD_BYTES * len(self.kernels)
        for index, name in enumerate(self.kernels):
            record = buffer.value + index * RECORD_BYTES
            kind = cupti.KIND_CONCURRENT_KERNEL if name is not None else 5  # 5: a memset
            ctypes.c_uint32.from_address(record).value = kind
            if name is not None:
                text = ctypes.create_string_buffer(name)
                self.keep.append(text)
                ctypes.c_void_p.from_address(record + cupti.NAME_OFFSET).value = \
                    ctypes.addressof(text)
        self.complete(None, 0, buffer.value, size.value, RECORD_BYTES * len(self.kernels))
        return cupti.SUCCESS

    def cuptiActivityGetNextRecord(self, buffer, valid, record) -> int:
        at = record._obj.value
        at = buffer if at is None else at + RECORD_BYTES
        if at + RECORD_BYTES > buffer + valid:
            return cupti.MAX_LIMIT_REACHED
        record._obj.value = at
        return cupti.SUCCESS

    def cuptiActivityGetNumDroppedRecords(self, context, stream, dropped) -> int:
        dropped._obj.value = self.dropped
        return cupti.SUCCESS


def test_a_trace_reads_the_name_of_every_kernel_record_and_no_other():
    lib = StandInCupti([b"_Z4reluPfi", None, b"relu_kernel"])
    calls = []
    names = cupti.Tracer(lib).trace(lambda: calls.append(list(lib.enabled)))
    assert names == [b"_Z4reluPfi", b"relu_kernel"]
    assert calls == [[cupti.KIND_CONCURRENT_KERNEL]]  # tracing was on while the call ran
    assert lib.enabled == []  # and is off after it


def test_a_trace_that_lost_records_answers_nothing():
    # a lost record could be the candidate's own kernel: "no kernel of its own" would be false
    with pytest.raises(cupti.CuptiError, match="dropped 2 records"):
        cupti.Tracer(StandInCupti([b"relu_kernel"], dropped=2)).trace(lambda: None)


def test_a_refused_trace_names_the_call_and_runs_nothing():
    lib = StandInCupti([], refuse={"enable": 35})
    calls = []
    with pytest.raises(cupti.CuptiError, match=r"cuptiActivityEnable: .*PRIVILEGES \(35\)"):
        cupti.Tracer(lib).trace(lambda: calls.append(1))
    assert calls == []


def test_the_copy_of_cupti_already_loaded_comes_first(tmp_path):
    (tmp_path / "nvidia" / "cu13" / "lib").mkdir(parents=True)
    wheel_copy = tmp_path / "nvidia" / "cu13" / "lib" / "libcupti.so.13"
    wheel_copy.write_bytes(b"")
    maps = ("7f00-7f01 r-xp 00000000 08:01 1 /opt/torch/lib/libcupti.so.13\n"
            "7f01-7f02 r-xp 00000000 08:01 2 /usr/lib/libc.so.6\n")
    found = cupti.library_candidates(maps, [str(tmp_path)])
    assert found[0] == "/opt/torch/lib/libcupti.so.13"
    assert found[1:1 + len(cupti.SONAMES)] == list(cupti.SONAMES)
    assert found[-1] == str(wheel_copy)


def test_the_launch_path_falls_back_from_graph_to_cupti_to_the_profiler(monkeypatch):
    import torch

    from pytest_kernelbench.gpu import timing

    monkeypatch.setattr(torch.cuda, "synchronize", lambda device=None: None)
    monkeypatch.setattr(timing, "forward_async", lambda model, inputs: None)
    monkeypatch.setattr(kernels, "captured_kernels", lambda *args: None)
    monkeypatch.setattr(kernels, "profiled_kernels", lambda call, device: ["profiled"])
    monkeypatch.setattr(cupti, "traced_kernels", lambda call, device: ["traced"])
    assert kernels.launched_kernels(None, [], [], "cuda:0", profile=False) == (["traced"],
                                                                              "cupti")

    def refused(call, device):
        raise cupti.CuptiError("no CUPTI library could be loaded")

    monkeypatch.setattr(cupti, "traced_kernels", refused)
    assert kernels.launched_kernels(None, [], [], "cuda:0", profile=True) == (["profiled"],
                                                                             "profiler")
    assert kernels.launched_kernels(None, [], [], "cuda:0", profile=False) == (None, "none")


def _cupti_include() -> Path | None:
    for root in (os.environ.get("CUDA_HOME"), "/usr/local/cuda", *sorted(
            Path("/usr/local").glob("cuda-*"), reverse=True)):
        if root and (Path(root) / "include" / "cupti_activity.h").is_file():
            return Path(root) / "include"
    return None


@pytest.mark.skipif(_cupti_include() is None or shutil.which("gcc") is None,
                    reason="needs a CUDA toolkit's CUPTI headers and gcc")
def test_the_name_offset_is_where_every_kernel_record_version_keeps_it(tmp_path):
    include = _cupti_include()
    headers = [h for h in ("cupti_activity.h", "cupti_activity_deprecated.h")
               if (include / h).is_file()]
    versions = sorted({int(v) for h in headers for v in re.findall(
        r"}\s*CUpti_ActivityKernel(\d+);", (include / h).read_text())})
    versions = [v for v in versions if v >= 4]
    assert versions, "no CUpti_ActivityKernel4 or later in the headers"
    program = tmp_path / "offsets.c"
    program.write_text(
        "#include <stdio.h>\n#include <stddef.h>\n"
        + "".join(f"#include <{h}>\n" for h in headers)
        + "int main(void) {\n"
        + "".join(f'  printf("%zu %zu\\n", offsetof(CUpti_ActivityKernel{v}, name), '
                  f"offsetof(CUpti_ActivityKernel{v}, kind));\n" for v in versions)
        + "  return 0;\n}\n")
    binary = tmp_path / "offsets"
    subprocess.run(["gcc", f"-I{include}", str(program), "-o", str(binary)], check=True,
                   capture_output=True)
    printed = subprocess.run([str(binary)], check=True, capture_output=True, text=True).stdout
    assert printed.split("\n")[:-1] == [f"{cupti.NAME_OFFSET} 0"] * len(versions)
