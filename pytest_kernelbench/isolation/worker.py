"""The sandbox worker: a separate process that imports and runs untrusted candidate code.

Started by sandbox.Sandbox as `python -m pytest_kernelbench.isolation.worker READ_FD WRITE_FD`. It answers
one request at a time: load a candidate, run it on one draw of inputs, or time it beside the
eager reference. Every reply is a wire message (JSON and raw tensor bytes), never a pickle.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import os
import re
import signal
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from pytest_kernelbench import confine, faults, nested, precision
from pytest_kernelbench.building import builds, pch, sources
from pytest_kernelbench.gpu import kernels, ordering, timing
from pytest_kernelbench.isolation import wire
from pytest_kernelbench.suite import loading

# The unused GPU memory a worker keeps cached between two requests of one stage: small
# beside a device's memory, even with one worker per core of a 16-core host.
KEPT_CACHE_BYTES = 1 << 30
PR_SET_PDEATHSIG = 1  # linux/prctl.h


@dataclass
class Loaded:
    key: tuple
    problem: ModuleType
    init_args: list[Any]
    model: Any
    numerics: precision.Numerics  # the request's that loaded the candidate
    # torch's switches right after the numerics were applied, before the candidate's code ran:
    # what the baseline runs under (loading.numerics_flags)
    baseline_flags: dict[str, Any]
    reference: Any = None
    timing_sets: tuple = ((), [])  # (seeds, input sets) of the last timing, kept for the burst
    phases: dict = dataclasses.field(default_factory=dict)  # seconds of each part of the load
    outside_names: list[str] = dataclasses.field(default_factory=list)  # see import_candidate
    # The input seed of every call of the candidate's model so far, in order: a reference that
    # keeps state between calls is judged called the same way (lockstep.py).
    calls: list[int] = dataclasses.field(default_factory=list)


class PhaseClock:
    """Seconds between successive laps, by name: where a worker's load spends its time."""

    def __init__(self) -> None:
        self.laps: dict[str, float] = {}
        self._last = time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.laps[name] = round(now - self._last, 6)
        self._last = now


class CandidateFault(Exception):
    """A failure of candidate code, already classified."""

    def __init__(self, status: str, message: str, details: str = ""):
        super().__init__(message)
        self.status, self.message, self.details = status, message, details


class TimedOutputs:
    """The candidate's last output for each input draw during a timing, as returned, for the
    pytest process to check, with the number of model calls made by then."""

    def __init__(self, graph: bool, candidate: timing.RotatingSide, calls: list[int]):
        self.graph, self.candidate, self.calls = graph, candidate, calls
        self.outputs: dict[int, Any] = {}
        self.calls_by: dict[int, int] = {}  # draw -> how many calls the model had made by then
        self.reused = False  # the candidate returned a buffer it had returned before

    def keep(self, output) -> None:
        # A graph overwrites its output on every replay, the next refill overwrites an
        # output computed in place in an input buffer, and a candidate that returns one
        # buffer of its own (a replayed graph's static output) overwrites it on its next
        # call: keep a copy of those, as they were when returned.
        kept = [leaf for value in self.outputs.values() for leaf in nested.leaves(value)]
        if not self.graph and timing.aliases(output, kept):
            self.reused = True
            # Outputs kept by reference before this was seen now hold this call's answer.
            for index in [i for i, value in self.outputs.items()
                          if timing.aliases(value, nested.leaves(output))]:
                del self.outputs[index]
        copy = self.graph or self.reused or timing.aliases(output, self.candidate.buffers)
        index = self.candidate.index
        self.outputs[index] = timing.clone_output(output) if copy else output
        self.calls_by[index] = len(self.calls)

    def complete(self, draws: int, call_on) -> None:
        """One more call for each draw whose kept output was dropped."""
        for index in range(draws):
            if index not in self.outputs:
                self.outputs[index] = timing.clone_output(call_on(index))
                self.calls_by[index] = len(self.calls)

    def encoded(self, seeds: Sequence[int], blobs: list[bytes], keep_alive) -> list[dict]:
        return [{"seed": seeds[index], "output": wire.encode_value(out, blobs, keep_alive),
                 "call": self.calls_by[index]} for index, out in sorted(self.outputs.items())]


class Worker:
    def __init__(self) -> None:
        self.loaded: Loaded | None = None
        self.shared: list = []  # tensors the parent may still be copying out over CUDA IPC
        # The last trial's inputs, alive until the next trial's are drawn: a new draw never
        # lands where the last one was, so a candidate that reads its first call's addresses
        # (a CUDA graph captured then and replayed) reads an old draw and is caught.
        self.last_inputs: list = []

    def handle(self, request: wire.Request) -> tuple[dict, list[bytes]]:
        reply, blobs = self.answer(request)
        attempts = confine.take_attempts()
        if attempts:  # refused by the kernel; the pytest process decides what that means
            reply["attempts"] = attempts
        started = confine.take_started()
        if started:  # processes it started, said on its record (not a fault by itself)
            reply["started"] = started
        return reply, blobs

    def answer(self, request: wire.Request) -> tuple[dict, list[bytes]]:
        self.shared = []
        try:
            if isinstance(request, wire.Release):  # the reply is followed by empty_cache
                self.last_inputs = []
                if self.loaded is not None:
                    self.loaded.timing_sets = ((), [])
                return {"ok": True}, []
            if isinstance(request, wire.Ping):
                return {"ok": True, "pid": os.getpid(), **enter_policy(request.policy)}, []
            if isinstance(request, wire.Pace):  # harness code only: timed by the pytest process
                return {"ok": True, "sum": timing.host_pace(request.steps)}, []
            if isinstance(request, wire.IpcProbe):
                import torch

                probe = torch.arange(64, dtype=torch.float32, device=request.device)
                gpu = str(torch.cuda.get_device_properties(probe.device).uuid)
                return {"ok": True, "gpu_uuid": gpu,
                        "output": wire.encode_value(probe, [], self.shared)}, []
            loaded = self.load(request.loading)
            if isinstance(request, wire.Load):
                return {"ok": True, "extensions": extension_libraries(),
                        "tf32": loading.tf32_switched_on(loaded.numerics),
                        "phases": loaded.phases,
                        "outside_names": loaded.outside_names}, []
            if isinstance(request, wire.Run):
                return self.run(loaded, request)
            if isinstance(request, wire.Time):
                return self.time(loaded, request)
            if isinstance(request, wire.Burst):
                return self.burst(loaded, request)
            if isinstance(request, wire.Profile):
                return self.profile(loaded, request)
            raise ValueError(f"a worker does not serve {request.op!r} requests")
        except CandidateFault as fault:
            return self.failure(fault.status, fault.message, fault.details), []
        except Exception as exc:  # noqa: BLE001 - e.g. inputs made with torch patched by a candidate
            status = faults.classify_exception(exc, "forward")
            return self.failure(status, faults.describe_exception(exc), ""), []

    def failure(self, status: str, message: str, details: str) -> dict:
        if status == faults.CUDA_ERROR:
            self.loaded = None  # the CUDA context is lost; the parent replaces this process
        reply = {"ok": False, "status": status, "error": message, "details": details}
        if status == faults.OUT_OF_MEMORY:  # the most this worker ever held, for the record
            reply["peak_bytes"] = loading.peak_device_bytes()
        return reply

    def load(self, spec: wire.Loading) -> Loaded:
        key = (spec.problem, spec.candidate, spec.seed, spec.device, spec.mode)
        if self.loaded is not None and self.loaded.key == key:
            return self.loaded
        self.loaded = None
        # e.g. this candidate's own build folder; this process serves one candidate only.
        os.environ.update(spec.env)
        numerics = precision.Numerics.of(spec.precision, spec.tf32)
        loading.apply(numerics)
        baseline_flags = loading.numerics_flags()
        device, seed = spec.device, spec.seed
        clock = PhaseClock()
        problem = loading.import_file(Path(spec.problem), "kb_problem")
        init_args = loading.make_init_args(problem, seed, device)
        clock.lap("problem")  # the CUDA context is there already (the start-up probe made it)
        loading.warm_libraries(device)
        clock.lap("libraries")
        candidate_path = spec.candidate
        if spec.order_trials and device.startswith("cuda"):
            ordering.track_streams()  # before the candidate can make any
        builds.echo_build_errors()  # a build in this process leaves its compiler lines in the log
        sources.keep_unchanged_sources()  # a rewritten source with the same bytes is not rebuilt
        pch.use_for_builds()  # a build left to this item reads the run's precompiled header
        if os.environ.get("TORCH_EXTENSIONS_DIR"):
            builds.replay_failure(Path(os.environ["TORCH_EXTENSIONS_DIR"]))
        module, outside_names = guarded(
            lambda: loading.import_candidate(Path(candidate_path), "kb_candidate",
                                             confine.own_folder(), Path(spec.problem)),
            "import", candidate_path)
        clock.lap("import")
        cls = getattr(module, "ModelNew", None)
        if not isinstance(cls, type):
            raise CandidateFault(faults.NO_MODEL_NEW,
                                 "the candidate module defines no class ModelNew")
        model = guarded(lambda: loading.build_model(cls, init_args, seed, device,
                                                    spec.mode, numerics),
                        "init", candidate_path)
        clock.lap("construct")
        self.loaded = Loaded(key, problem, init_args, model, numerics, baseline_flags,
                             phases=clock.laps, outside_names=outside_names)
        return self.loaded

    def run(self, loaded: Loaded, request: wire.Run) -> tuple[dict, list[bytes]]:
        """One correctness trial: the output, and the inputs as the candidate left them."""
        device = request.loading.device
        inputs = loading.make_inputs(loaded.problem, request.input_seed, device,
                                     loaded.numerics)
        order = request.order
        if order:  # a stream-order trial (ordering.py)
            run = lambda: ordering.ordered_forward(loaded.model, inputs, device, order)  # noqa: E731
        else:
            if request.settle_inputs:  # ordering is left to the order trials
                loading.synchronize(device)
            run = lambda: forward(loaded.model, inputs, device)  # noqa: E731
        loaded.calls.append(request.input_seed)
        output = guarded(run, "forward", request.loading.candidate)
        self.last_inputs = inputs  # the last trial's go only now, after this one ran
        blobs: list[bytes] = []
        keep_alive = self.shared if request.cuda_ipc else None
        streams = len(ordering.own_streams(device)) if request.loading.order_trials else 0
        return {"ok": True, "output": wire.encode_value(output, blobs, keep_alive),
                "inputs_after": wire.encode_value(tensors_only(inputs), blobs, keep_alive),
                "extensions": extension_libraries(),
                "tf32": loading.tf32_switched_on(loaded.numerics),
                "streams": streams, **calls_so_far(loaded, request.loading)}, blobs

    def time(self, loaded: Loaded, request: wire.Time) -> tuple[dict, list[bytes]]:
        """Baseline and candidate in turns, on input buffers refilled before every call.

        The candidate sees the same buffers (same pointers) with rotating contents, so a cache
        keyed on pointers or call counts returns stale results; the last output it produced
        for each input set goes back to the pytest process to be checked. Every baseline output
        is poisoned with NaN once timed, so `torch.empty` cannot hand the candidate the
        reference's answer. With `timing: graph` each side is captured in a CUDA graph and
        replayed; a side that cannot be captured makes the reply say so (`graph_error`).
        """
        device = request.loading.device
        graph = request.timing == "graph"
        began = time.perf_counter()
        sets = self.input_sets(loaded, request.loading, request.input_seeds)
        try:
            sides = self.rotating_sides(loaded, request, sets, graph)
        except CandidateFault as fault:
            if not graph:
                raise
            self.loaded = None  # a failed capture can leave the context unusable
            return {"ok": True, "graph_error": fault.message}, []
        candidate = sides.pop("candidate")
        kept = TimedOutputs(graph, candidate, loaded.calls)

        # The baseline's outputs are poisoned at once but held as long as the candidate's are
        # (the last of each input draw): both sides then free memory in the same rhythm, and
        # neither gets pages warmed by the other's frees (on a CPU, fresh pages for a large
        # output can cost more than the kernel, and an uneven rhythm read as a 2x speedup).
        held: dict[int, Any] = {}

        def poison_and_hold(output) -> None:
            timing.poison(output)
            held[sides["baseline"].index] = output

        turns = {name: side.turn(poison_and_hold) for name, side in sides.items()}
        turns["candidate"] = candidate.turn(kept.keep)
        # Each side runs under its own switches: the baseline under the harness's, the
        # candidate under whatever it set for itself.
        own, policy = loading.numerics_flags(), loaded.baseline_flags
        turns = {name: dataclasses.replace(turn, prepare=with_flags(
            policy if name == "baseline" else own, turn.prepare)) for name, turn in turns.items()}
        ready = time.perf_counter()
        measured = guarded(
            lambda: timing.measure_interleaved(
                turns, device, request.budget_s, request.min_rounds, request.target_rse,
                max_rounds=request.max_rounds or timing.MAX_ROUNDS,
                thresholds=request.thresholds),
            "forward", request.loading.candidate)
        measured_at = time.perf_counter()
        kept.complete(len(sets), lambda index: guarded(
            lambda: candidate.call_on(index), "forward", request.loading.candidate))
        blobs: list[bytes] = []
        keep_alive = self.shared if request.cuda_ipc else None
        checked = kept.encoded(request.input_seeds, blobs, keep_alive)
        phases = {"setup": ready - began, "warmup": measured.warmup_s,
                  "rounds": measured_at - ready - measured.warmup_s,
                  "outputs": time.perf_counter() - measured_at}
        return {"ok": True, "samples_s": measured.samples_s, "stopped": measured.stopped,
                "rounds": measured.rounds, "timed_outputs": checked,
                "reused_output": kept.reused, "phases": phases,
                **calls_so_far(loaded, request.loading)}, blobs

    def rotating_sides(self, loaded: Loaded, request: wire.Time, sets: list,
                       graph: bool) -> dict[str, timing.RotatingSide]:
        """The timing's sides on the input sets: the baseline (unless the request has none)
        and the candidate, whose every call is logged by its input seed."""
        device, seeds = request.loading.device, request.input_seeds
        sides = {}
        if request.with_baseline:
            reference = self.reference_model(loaded, request.loading, request.baseline)
            sides["baseline"] = guarded(
                lambda: timing.RotatingSide(reference, sets, graph, device), "forward", "")
        sides["candidate"] = guarded(
            lambda: timing.RotatingSide(loaded.model, sets, graph, device,
                                        on_call=lambda index: loaded.calls.append(seeds[index])),
            "forward", request.loading.candidate)
        return sides

    def burst(self, loaded: Loaded, request: wire.Burst) -> tuple[dict, list[bytes]]:
        """Back-to-back calls for the pytest process to time with its own clock: the
        candidate's, or (`side: baseline`) the baseline's in this same process."""
        device = request.loading.device
        sets = self.input_sets(loaded, request.loading, request.input_seeds)
        model = self.reference_model(loaded, request.loading, request.baseline) \
            if request.side == "baseline" else loaded.model
        own = loading.numerics_flags()
        if request.side == "baseline":
            loading.apply_numerics_flags(loaded.baseline_flags)
        try:
            timed_s = guarded(lambda: timing.timed_burst(model, sets, request.calls, device),
                              "forward", request.loading.candidate)
        finally:
            loading.apply_numerics_flags(own)
        if model is loaded.model:
            seeds = request.input_seeds
            loaded.calls.extend(seeds[index % len(sets)] for index in range(request.calls))
        return {"ok": True, "timed_s": timed_s}, []

    def profile(self, loaded: Loaded, request: wire.Profile) -> tuple[dict, list[bytes]]:
        """Names of the GPU kernels one call of the candidate launches (None where neither a
        CUDA graph nor a CUPTI trace reads them and the request asks for no profiler session)."""
        device = request.loading.device
        inputs = loading.make_inputs(loaded.problem, request.input_seed, device,
                                     loaded.numerics)
        other = loading.make_inputs(loaded.problem, request.input_seed + 1, device,
                                    loaded.numerics)
        names, how = guarded(lambda: kernels.launched_kernels(
            loaded.model, inputs, other, device, request.profiler),
            "forward", request.loading.candidate)
        return {"ok": True, "kernels": names, "attribution": how}, []

    def input_sets(self, loaded: Loaded, spec: wire.Loading,
                   input_seeds: tuple[int, ...]) -> list:
        """The draws for these seeds, made once per candidate: the pytest process times a burst
        by its own clock, and making large inputs (slow on a CPU) must not count as its calls."""
        if loaded.timing_sets[0] != input_seeds:
            loaded.timing_sets = (input_seeds, [loading.make_inputs(
                loaded.problem, seed, spec.device, loaded.numerics) for seed in input_seeds])
        return loaded.timing_sets[1]

    def reference_model(self, loaded: Loaded, spec: wire.Loading, baseline: str):
        """The baseline to time against: the eager reference, or it under torch.compile (as
        the request that first asks for it says)."""
        if loaded.reference is None:
            model = loading.build_model(loaded.problem.Model, loaded.init_args, spec.seed,
                                        spec.device, spec.mode, loaded.numerics)
            loaded.reference = loading.as_baseline(model, baseline)
        return loaded.reference


def calls_so_far(loaded: Loaded, spec: wire.Loading) -> dict:
    """The seeds of the model's calls so far, for a request that judges in lockstep."""
    return {"calls": loaded.calls} if spec.lockstep else {}


def with_flags(flags: dict, prepare):
    """prepare, preceded by setting torch's numerics switches to flags."""
    def prepared() -> None:
        loading.apply_numerics_flags(flags)
        prepare()
    return prepared


def enter_policy(policy: str | None) -> dict:
    """Confine this process as the first request asks (policy: confine.Policy as JSON, None
    for none), before any candidate code runs here."""
    if not policy:
        return {"confinement": confine.Applied(notes=["--kb-confine=off"]).describe()}
    try:
        applied = confine.enter(confine.Policy.from_json(policy))
    except (confine.ConfineError, OSError) as exc:
        applied = confine.Applied(notes=[f"could not confine: {exc}"])
    return {"confinement": applied.describe(), "confined": applied.confined}


def forward(model, inputs: list, device: str):
    out = timing.forward_async(model, inputs)
    loading.synchronize(device)
    return out


COMPILER_CACHES = re.compile(r"torchinductor|triton", re.IGNORECASE)


def extension_libraries() -> list[str]:
    """Shared libraries the candidate built that the process has loaded (Linux:
    /proc/self/maps): from its build folder, or from a folder of its own choosing in the
    temporary or cache folders (generated code often builds into `tempfile.mkdtemp()`). A built
    extension missing here was never loaded: the candidate runs without it."""
    import tempfile

    folder = os.environ.get("TORCH_EXTENSIONS_DIR")
    if not folder:
        return []
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split(maxsplit=5)[-1].strip() for line in maps if ".so" in line}
    except OSError:
        return []
    roots = [os.path.join(os.path.realpath(where), "") for where in
             (folder, tempfile.gettempdir(),
              os.path.join(os.path.expanduser("~"), ".cache", "torch_extensions"))]
    return sorted(path for path in paths
                  if any(os.path.realpath(path).startswith(root) for root in roots)
                  and not COMPILER_CACHES.search(path))  # torch.compile's, Triton's: not its own


def tensors_only(values: list) -> list:
    import torch

    return [v for v in values if isinstance(v, torch.Tensor)]


def guarded(fn, stage: str, candidate_path: str):
    """Run candidate code; turn anything it raises (exit included) into a CandidateFault."""
    try:
        return fn()
    except CandidateFault:
        raise
    except BaseException as exc:  # noqa: BLE001 - candidate code may raise anything, even SystemExit
        if confine.refused(exc):  # what it tried was refused, not reported on its way
            raise CandidateFault(faults.SANDBOX_VIOLATION,
                                 f"refused by the sandbox: {faults.describe_exception(exc)}",
                                 faults.candidate_traceback(exc, candidate_path)) from None
        status = faults.classify_exception(exc, stage)
        raise CandidateFault(status, faults.exception_message(exc, status),
                             faults.candidate_traceback(exc, candidate_path)) from None


def serve(read_fd: int, write_fd: int) -> int:
    """Answer requests on the two pipes until the pytest process closes them."""
    worker = Worker()
    while True:
        try:
            header, _ = wire.read_message(read_fd)
        except EOFError:
            return 0
        try:
            request = wire.decode_request(header)
        except wire.BadRequest as exc:  # the harness's mistake: said, and nothing run
            wire.write_message(write_fd, {"ok": False, "refused": str(exc)})
            continue
        reply, blobs = worker.handle(request)
        wire.write_message(write_fd, reply, blobs)
        # A stage's end (release) gives back the whole cache; between two requests of a stage
        # a small one stays, saving the next request the driver's frees and allocations.
        loading.release_cached_memory(0 if isinstance(request, wire.Release)
                                      else KEPT_CACHE_BYTES)


def die_with_parent() -> None:
    """Have the kernel kill this process when the thread that started it ends (Linux), so
    that a pytest process killed outright leaves no zygote or worker behind: a worker stuck in
    a candidate's import would spin a core, or hold a GPU context, into the next run. (A
    zygote started from a thread that ends is started again at the next candidate.)"""
    parent = os.getppid()
    with contextlib.suppress(OSError, AttributeError):  # no prctl: not Linux
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent ended before the request took hold
        os._exit(1)


def zygote(control_fd: int) -> int:
    """Fork one fresh worker per candidate, from a process that has already imported torch.

    Each candidate gets a pristine interpreter (nothing an earlier candidate patched, built or
    broke survives), while `import torch` is paid once. Requests on the control socket:
    `fork` with the child's two pipe ends attached (SCM_RIGHTS) -> `pid N`;
    `wait N` -> `status CODE` once that child has ended.
    """
    import socket

    die_with_parent()
    import torch  # noqa: F401 - imported before any fork, never initialising CUDA here

    loading.apply(precision.EXACT_FP32)  # each fork applies its run's own at load
    control = socket.socket(fileno=control_fd)
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(control, 256, 2)
        except OSError:
            return 0
        if not message:
            return 0
        command = message.decode().split()
        if command[0] == "fork":
            pid = os.fork()
            if pid == 0:
                control.close()
                os.setsid()  # a timeout kills the candidate and anything it started
                die_with_parent()  # the zygote, which ends with the pytest process
                code = 1
                try:
                    code = serve(fds[0], fds[1])
                finally:
                    os._exit(code)
            for fd in fds:
                os.close(fd)
            control.sendall(f"pid {pid}\n".encode())
        elif command[0] == "wait":
            _, status = os.waitpid(int(command[1]), 0)
            control.sendall(f"status {os.waitstatus_to_exitcode(status)}\n".encode())


def main(argv: list[str]) -> int:
    return zygote(int(argv[1]))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
