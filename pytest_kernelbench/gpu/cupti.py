"""The names of the GPU kernels that ran during one call, from CUPTI's activity records.

A call that a CUDA graph cannot capture (it synchronises, or replays graphs of its own) still
leaves one CUPTI record per kernel that ran while kernel tracing was on: launched from any
stream, from any thread, or as a node of a graph. torch's profiler reads the same records, but
a session of it costs seconds; enabling one activity kind through ctypes and reading one field
of each record costs what the call and a flush cost.

Only the records' common head is read: every CUpti_ActivityKernel version from 4 on keeps
`const char *name` at byte NAME_OFFSET (tests/test_cupti.py checks it against the header where
a CUDA toolkit is installed). A trace that lost records answers nothing, since a lost record
could be the candidate's own kernel.
"""

from __future__ import annotations

import ctypes
import functools
import glob
import os
import sys
import threading

SUCCESS, MAX_LIMIT_REACHED = 0, 12  # CUptiResult
KIND_KERNEL, KIND_CONCURRENT_KERNEL = 3, 10  # CUpti_ActivityKind
NAME_OFFSET = 104
FLUSH_FORCED = 1  # CUPTI_ACTIVITY_FLAG_FLUSH_FORCED
BUFFER_BYTES = 1 << 20
SONAMES = ("libcupti.so.13", "libcupti.so.12", "libcupti.so")

_REQUEST = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_void_p),
                            ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_size_t))
_COMPLETE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p,
                             ctypes.c_size_t, ctypes.c_size_t)


class CuptiError(RuntimeError):
    """CUPTI is missing here, or refused a call."""


def kernel_names(buffer: int, valid_bytes: int, next_record) -> list[bytes]:
    """The raw names of the kernel records in one completed buffer. next_record(buffer, size,
    pointer) is cuptiActivityGetNextRecord (a stand-in in tests)."""
    names = []
    record = ctypes.c_void_p()
    while next_record(buffer, valid_bytes, ctypes.byref(record)) == SUCCESS and record.value:
        kind = ctypes.c_uint32.from_address(record.value).value
        if kind in (KIND_KERNEL, KIND_CONCURRENT_KERNEL):
            name = ctypes.c_char_p.from_address(record.value + NAME_OFFSET).value
            names.append(name or b"")
    return names


def library_candidates(loaded_maps: str, roots: list[str]) -> list[str]:
    """Where to load CUPTI from, best first: a copy this process already holds (torch's own,
    so that one CUPTI serves both), its usual names, then copies beneath roots (Python's
    site-packages, the CUDA toolkit)."""
    found = []
    for line in loaded_maps.splitlines():
        path = line.split()[-1] if line.split() else ""
        if os.path.basename(path).startswith("libcupti.so") and path not in found:
            found.append(path)
    found.extend(SONAMES)
    for root in roots:
        for pattern in ("nvidia/*/lib/libcupti.so*", "nvidia/*/*/lib/libcupti.so*",
                        "extras/CUPTI/lib64/libcupti.so*", "lib64/libcupti.so*",
                        "lib/libcupti.so*"):
            found.extend(sorted(glob.glob(os.path.join(root, pattern))))
    return found


def _roots() -> list[str]:
    import site
    roots = [*site.getsitepackages(), site.getusersitepackages()]
    for variable in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(variable):
            roots.append(os.environ[variable])
    roots.append("/usr/local/cuda")
    return roots


def _read_maps() -> str:
    try:
        with open(f"/proc/{os.getpid()}/maps") as maps:
            return maps.read()
    except OSError:
        return ""


@functools.cache
def _library() -> ctypes.CDLL:
    errors = []
    for name in library_candidates(_read_maps(), _roots()):
        try:
            lib = ctypes.CDLL(name)
            lib.cuptiActivityEnable  # noqa: B018 - a library of that name without the API
        except (OSError, AttributeError) as exc:
            errors.append(str(exc))
            continue
        lib.cuptiActivityGetNextRecord.argtypes = [ctypes.c_void_p, ctypes.c_size_t,
                                                   ctypes.POINTER(ctypes.c_void_p)]
        lib.cuptiActivityGetNumDroppedRecords.argtypes = [ctypes.c_void_p, ctypes.c_uint32,
                                                          ctypes.POINTER(ctypes.c_size_t)]
        return lib
    raise CuptiError("no CUPTI library could be loaded" + (f": {errors[-1]}" if errors else ""))


class Tracer:
    """One per process: CUPTI takes one pair of buffer callbacks, and they must stay alive."""

    def __init__(self, lib: ctypes.CDLL) -> None:
        self.lib = lib
        self.buffers: dict[int, ctypes.Array] = {}
        self.names: list[bytes] = []
        self.dropped = 0
        self.lock = threading.Lock()
        self._request = _REQUEST(self._on_request)
        self._complete = _COMPLETE(self._on_complete)
        self._check(lib.cuptiActivityRegisterCallbacks(self._request, self._complete),
                    "cuptiActivityRegisterCallbacks")

    def _check(self, result: int, what: str) -> None:
        if result != SUCCESS:
            text = ctypes.c_char_p()
            self.lib.cuptiGetResultString(result, ctypes.byref(text))
            raise CuptiError(f"{what}: {(text.value or b'').decode()} ({result})")

    def _on_request(self, buffer, size, max_records) -> None:
        block = (ctypes.c_uint64 * (BUFFER_BYTES // 8))()  # records are 8-byte aligned
        address = ctypes.addressof(block)
        with self.lock:
            self.buffers[address] = block
        buffer[0] = address
        size[0] = BUFFER_BYTES
        max_records[0] = 0  # as many as fit

    def _on_complete(self, context, stream, buffer, size, valid) -> None:
        try:
            names = kernel_names(buffer, valid, self.lib.cuptiActivityGetNextRecord) \
                if valid else []
            dropped = ctypes.c_size_t(0)
            self.lib.cuptiActivityGetNumDroppedRecords(context, stream, ctypes.byref(dropped))
            with self.lock:
                self.names.extend(names)
                self.dropped += dropped.value
        except Exception as exc:  # noqa: BLE001 - raising here would reach CUPTI's thread
            with self.lock:
                self.dropped += 1
            print(f"kernelbench: a CUPTI buffer could not be read: {exc}", file=sys.stderr)
        finally:
            with self.lock:
                self.buffers.pop(buffer, None)

    def trace(self, call) -> list[bytes]:
        """The raw kernel names of the records that call() (which must wait for its own work)
        leaves; CuptiError where CUPTI refused or lost any record."""
        with self.lock:
            self.names, self.dropped = [], 0
        self._check(self.lib.cuptiActivityEnable(KIND_CONCURRENT_KERNEL), "cuptiActivityEnable")
        try:
            call()
        finally:
            self.lib.cuptiActivityDisable(KIND_CONCURRENT_KERNEL)
            self._check(self.lib.cuptiActivityFlushAll(FLUSH_FORCED), "cuptiActivityFlushAll")
        with self.lock:
            if self.dropped:
                raise CuptiError(f"CUPTI dropped {self.dropped} records")
            return list(self.names)


@functools.cache
def tracer() -> Tracer:
    """This process's tracer; CuptiError where CUPTI cannot be loaded or set up here."""
    return Tracer(_library())


def traced_kernels(call, device: str) -> list[str]:
    """The kernel names (demangled, sorted, each once) of what runs while call() runs and
    until device has finished its work; CuptiError where CUPTI cannot answer."""
    import torch

    def whole() -> None:
        call()
        torch.cuda.synchronize(device)

    torch.cuda.synchronize(device)  # earlier work leaves no record in this trace
    raw = tracer().trace(whole)
    return sorted({demangle(name.decode(errors="replace")) for name in raw})


@functools.cache
def _cxa_demangle():
    demangle = ctypes.CDLL("libstdc++.so.6").__cxa_demangle
    demangle.restype = ctypes.c_void_p
    demangle.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p,
                         ctypes.POINTER(ctypes.c_int)]
    return demangle


def demangle(symbol: str) -> str:
    """A C++ symbol as the profiler shows it ('_Z4fillPfi' -> 'fill(float*, int)'); a name
    that is not mangled (a Triton kernel's), or that cannot be demangled, as it is."""
    if not symbol.startswith("_Z"):
        return symbol
    try:
        demangle_c = _cxa_demangle()
    except (OSError, AttributeError):
        return symbol
    status = ctypes.c_int(-1)
    pointer = demangle_c(symbol.encode(), None, None, ctypes.byref(status))
    if status.value != 0 or not pointer:
        return symbol
    try:
        return ctypes.string_at(pointer).decode(errors="replace")
    finally:
        ctypes.CDLL(None).free(ctypes.c_void_p(pointer))
