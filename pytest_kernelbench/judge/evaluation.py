"""The three stages of a case -- compile, correct, speed -- as the pytest process runs them.

Candidate code only ever runs in the sandbox worker. This side imports the (trusted) problem,
computes reference outputs from its own inputs, and judges what the worker sends back.
Each stage result is memoised per case, so a later stage reuses an earlier verdict, and a stage
run alone (e.g. `-m kb_speed`, or on another xdist worker) first runs the stages it needs.
"""

from __future__ import annotations

import contextlib
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pytest_kernelbench import faults, nested, precision
from pytest_kernelbench.building import builds
from pytest_kernelbench.building.builds import cuda_arch, needs_cuda
from pytest_kernelbench.gpu import devices, ordering, roofline, timing
from pytest_kernelbench.gpu.devices import device_lock, driver_version, use_device
from pytest_kernelbench.gpu.kernels import custom_kernels, launched_kernels
from pytest_kernelbench.isolation import ncu, wire
from pytest_kernelbench.isolation.sandbox import Fault, Sandbox
from pytest_kernelbench.judge import baselines, lockstep, upstream
from pytest_kernelbench.judge.lockstep import Lockstep
from pytest_kernelbench.settings import Settings, summary_ps
from pytest_kernelbench.suite import correctness, loading
from pytest_kernelbench.suite.discovery import Case
from pytest_kernelbench.suite.integrity import ProblemDigests
from pytest_kernelbench.suite.manifest import Entry
from pytest_kernelbench.suite.scan import scan_source

INPUT_SEED_OFFSET = 1_000  # trial t draws inputs with seed + INPUT_SEED_OFFSET + t
TIMING_SEED_OFFSET = 9_000
TIMING_INPUT_SETS = 3  # timed calls rotate through this many input draws
UPSTREAM_PERF_TRIALS = 100  # timed calls of upstream's evaluation scripts (num_perf_trials)
BURST_TARGET_S = 0.05  # the harness's own clock times about this long a burst of calls
BURST_MAX_CALLS = 2_000
BURST_TRIES = 3  # bursts before a reported time that the harness's clock contradicts is a cheat
HOST_CHECKS = 3  # then pairs of bursts, baseline then candidate, for a host whose load changed
# On a CPU a reported speedup may exceed the one the harness's own clock saw by this factor
# (a single burst on a shared host can be off by a third) before the harness's figure, also an
# honest measurement, replaces it.
CPU_CLOCK_SLACK = 1.25
CPU_CLOCK_CLOSE = 1.10  # a reported speedup this close to the first pair of bursts stands
# On a CPU, bursts of the same baseline in the candidate's process and in the pytest process
# were seen 2-2.5x apart with nothing slowing either (conv-heavy models in the README's main
# job; the cause is not established): a slowed baseline is only recognised beyond this factor.
CPU_PROCESS_SPREAD = 3.0
CPU_CLOCK_RETRIES = 3  # more pairs of bursts when the first pair does not settle it
CPU_CONFIRM_BELOW_S = 2.0  # pairs of bursts this cheap are measured CPU_CLOCK_PAIRS times
CPU_CLOCK_PAIRS = 3
CPU_CLOCK_MAX_PAIRS = 15  # on a busy host, pairs are added until they decide, up to this many
AUTO_GRAPH_BELOW_S = 50e-6  # --kb-timing=auto: graphs for baselines faster than this per call
# Reference outputs are kept from one stage to the next up to this size in all; on a CPU a
# reference model larger than this is let go while the worker times (_set_reference_aside).
KEPT_OUTPUTS_BYTES = 256 * 2**20


@dataclass
class Outcome:
    """What one stage concluded. `skipped` marks a stage that could not run, not a failure."""

    status: str
    message: str = ""
    details: str = ""
    skipped: bool = False
    record: dict = field(default_factory=dict)
    candidate_samples_s: list[float] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.status == faults.PASSED and not self.skipped


class ProblemError(Exception):
    """The problem itself failed (its inputs, its weights, its reference): its fault, not the
    candidate's."""


class Evaluator:
    def __init__(self, settings: Settings, device: str,
                 overrides: dict[tuple[int, int], Entry] | None = None,
                 problem_digests: ProblemDigests | None = None, started_s: float = 0.0,
                 broken: dict[Path, str] | None = None, worker: str | None = None):
        loading.use_huge_pages()  # here and in the sandbox workers, started below
        loading.set_numerics(settings.precision, settings.tf32)
        use_device(device)
        self.settings = settings
        self.overrides = overrides or {}
        self.problem_digests = problem_digests
        # Problem file -> why it cannot be evaluated (checked at collection, or found on use).
        self.broken: dict[Path, str] = dict(broken or {})
        self.started_s = started_s or time.time()  # builds made since then are this run's
        # Returns once the run's build pool is done with a build folder (set by the plugin).
        self.wait_for_build: Callable[[Path], None] = lambda folder: None
        self.build_entry: Callable[[Path], dict | None] = lambda folder: None
        self._last_case: str | None = None  # named when a problem file changes under us
        self._deadline = float("inf")  # when the running stage's --kb-timeout runs out
        self.device = device
        env = {"TRITON_INTERPRET": "1"} if device == "cpu" else {}
        # Candidate code may not read other candidates or the builds made from them.
        protected = (*settings.candidate_dirs, self.build_cache)
        self.sandbox = Sandbox(env, device, settings.confine, protected,
                               stops_for_timings=settings.drain == "stop")
        self._done: dict[tuple[Case, str], Outcome] = {}
        self._problem_path: Path | None = None
        self._problem: Any = None
        self._reference: Any = None
        self._expected: dict[int, Any] = {}
        self._problem_checked = False
        self._reference_mutates = False
        # why the loaded problem's reference cannot be judged against (state kept, overflow)
        self._unjudgeable = ""
        self._stochastic = False  # whether it draws random numbers in forward
        # for a reference that keeps state between calls: its twin, called as the candidate was
        self._lockstep: Lockstep | None = None
        self._per_problem: dict[str, Any] = {}  # baseline facts measured here, once per problem
        self._ceilings: dict[str, roofline.Ceilings] = {}
        self._retimed: set[str] = set()  # baseline cache keys timed afresh in this run
        self._envs: dict[Path, dict[str, str]] = {}  # candidate file -> its build environment
        self._build_waits: dict[Case, float] = {}  # seconds a compile item waited for its build
        self._timed: dict[Case, tuple] = {}  # timed cases awaiting attribution and verdict
        self.timing_batch = 1  # timings of the device that gather before it drains
        self.arch = cuda_arch(device)
        self.placement = placement(device, worker)

    def close(self) -> None:
        self.sandbox.close()

    # --- stages ---------------------------------------------------------------------------

    def compile(self, case: Case) -> Outcome:
        if (case, "compile") not in self._done:
            self._await_build(case)
        return self._memo(case, "compile", self._compile, exclusive=False)

    def correct(self, case: Case) -> Outcome:
        return self._memo(case, "correct", self._correct, exclusive=False)

    def speed(self, case: Case) -> Outcome:
        checked = self.correct(case)  # under the shared lock, before timing takes it alone
        # A candidate that failed is not timed (unless upstream's rules pass it, for their
        # speedup): its skip need not wait for the device to itself.
        times = checked.passed or bool((checked.record.get("upstream") or {}).get("correct"))
        timed = self._memo(case, "speed", self._speed, exclusive=times)
        if case not in self._timed and (case, "attribute") not in self._done:
            return timed  # not timed, or judged while it was timed (a cheat)
        # What follows the timing needs the device, but not alone: other work may share it.
        judged = self._memo(case, "attribute", self._attribute, exclusive=False)
        if not (self.settings.profile and self.device.startswith("cuda")):
            return judged
        # Nsight Compute replays each kernel and locks the clocks: alone on the device again.
        return self._memo(case, "ncu", lambda c: self._profile_under_ncu(c, judged),
                          exclusive=True)

    def _memo(self, case: Case, stage: str, run, exclusive: bool) -> Outcome:
        key = (case, stage)
        if key not in self._done:
            if self.problem_digests is not None:  # raises ProblemChanged
                self.problem_digests.check(case.problem.path, self._last_case)
            self._last_case = f"{case.problem.key}[{case.id}]"
            outer = devices.holding_a_device()
            outcome = self._held(case, stage, run, exclusive)
            if outcome.status == faults.OUT_OF_MEMORY and not exclusive and not outer:
                outcome = self._alone_after_oom(case, stage, run, outcome)
            self._done[key] = outcome
        return self._done[key]

    def _alone_after_oom(self, case: Case, stage: str, run, beside: Outcome) -> Outcome:
        """A stage that ran out of memory while other work shared the device runs once more
        with the device to itself, in a fresh worker: the other workers' stages held part of
        the memory, and a verdict must not depend on what ran beside the candidate."""
        self.sandbox.stop_child()
        outcome = self._held(case, stage, run, exclusive=True)
        first = beside.record.get("held", {}).get(stage)
        if first:  # a shared hold like any other, for the check that no timing overlapped it
            name = f"{stage}_beside_others"
            outcome.record["held"] = {**outcome.record["held"], name: first}
            if (beside.record.get("aside") or {}).get(stage):
                outcome.record["aside"] = {**(outcome.record.get("aside") or {}),
                                           name: beside.record["aside"][stage]}
        flag = (f"ran out of device memory while sharing the device; judged again with the "
                f"device to itself (the first run said: {beside.message})")
        outcome.record["flags"] = [*(outcome.record.get("flags") or []), flag]
        return outcome

    def _held(self, case: Case, stage: str, run, exclusive: bool) -> Outcome:
        """Run one stage under the device lock and note in its record how it held it."""
        asked = time.monotonic()
        with device_lock(self.device, exclusive, self.timing_batch,
                         idle_first=self.settings.drain == "stop") as hold:
            held_from = time.time()
            lock_wait_s = time.monotonic() - asked
            outer_hold, self.sandbox.hold = self.sandbox.hold, hold
            # --kb-timeout bounds the stage: its requests share what is left of it (a stage
            # that runs an earlier one first gets its own time back afterwards).
            began = time.monotonic()
            outer, self._deadline = self._deadline, began + self.settings.timeout_s
            try:
                # A broken problem fails its cases' compile items; the later stages are
                # then skipped after them, so it is said once per case.
                defect = self.broken.get(case.problem.path) if stage == "compile" else None
                outcome = problem_outcome(case, defect) if defect else run(case)
            except ProblemError as exc:
                self.broken[case.problem.path] = str(exc)
                outcome = problem_outcome(case, str(exc))
            finally:
                self._deadline = outer + (time.monotonic() - began)
                self.sandbox.hold = outer_hold
                self._let_go_of_memory()
                self.sandbox.pause()  # still under the lock: nothing of it runs past the stage
            held_to = time.time()
        # Where the stage ran and when it held the device: a multi-GPU run's report shows
        # which GPU each worker used and that no timing overlapped other work on it.
        outcome.record["placement"] = {**self.placement,
                                       "worker_gpu_uuid": self.sandbox.worker_gpu}
        if outcome.record.get("harness_s"):  # the candidate ran, in this worker
            outcome.record["confinement"] = self.sandbox.confinement
        if outcome.details and not outcome.passed and not outcome.skipped:
            # Where it failed (the candidate's frames, the compiler's lines), for feedback.
            outcome.record["error_details"] = outcome.details[-4000:]
        outcome.record["held"] = {**outcome.record.get("held", {}),
                                  stage: [round(held_from, 6), round(held_to, 6)]}
        if outcome.record.get("harness_s"):  # charged to cases whose candidate ran
            charge(outcome.record, "lock_wait", lock_wait_s)
        if hold.aside:  # spans it let others use the device while a compiler ran
            outcome.record["aside"] = {**outcome.record.get("aside", {}), stage: hold.aside}
        if hold.busy:
            outcome.record["flags"] = [*(outcome.record.get("flags") or []), (
                f"the GPU was still busy {devices.IDLE_TIMEOUT_S:g} s after the work sharing it "
                "was stopped: something outside this run's control ran beside this stage")]
        return outcome

    def _let_go_of_memory(self) -> None:
        """What a stage leaves behind is given back before the next lock is asked for: the
        workers of a run share the device's memory, and one waiting for the device must not
        hold what the stage that runs meanwhile needs. Large reference outputs are computed
        again when asked for (of the compile stage's draw, the only one a later stage asks for
        again, that costs one reference call); the worker drops its timing draws."""
        if nested.nbytes(self._expected) > KEPT_OUTPUTS_BYTES:
            self._expected = {}
        if nested.nbytes(self._per_problem.get("precise")) > KEPT_OUTPUTS_BYTES:
            self._per_problem.pop("precise")
        self.sandbox.release()
        loading.release_cached_memory()

    def _compile(self, case: Case) -> Outcome:
        record = base_record(case)
        if case.candidate is None:
            record.update(status=faults.MISSING, error="no candidate in this set")
            return Outcome(faults.MISSING, f"set {case.set_name} has no candidate for "
                           f"{case.problem.key}", skipped=True, record=record)
        source = case.candidate.path.read_text(errors="replace")
        if self.device == "cpu" and needs_cuda(source):
            message = "CUDA-only candidate: needs a CUDA device, this run uses cpu"
            record.update(status=faults.UNSUPPORTED_DEVICE, error=message)
            return Outcome(faults.UNSUPPORTED_DEVICE, message, skipped=True, record=record)
        # The problem first: if its inputs or reference fail, that is said of the problem
        # (ProblemError), before the candidate's worker makes the same inputs and is blamed.
        self._reference_output(case, self._input_seed(0))
        record["static_scan"] = scan_source(source)
        folder = Path(self._candidate_env(case)["TORCH_EXTENSIONS_DIR"])
        builds_one = builds.needs_build(source)
        if case in self._build_waits:
            charge(record, "build_wait", self._build_waits.pop(case))
        if builds_one:
            record["prebuild"] = self.build_entry(folder)
        with builds.holding(folder, self._device_aside) if builds_one \
                else contextlib.nullcontext():
            if builds_one and not builds.intact(folder):
                builds.discard(folder)
                record["flags"] = [*record.get("flags", []), "its cached build had changed "
                                   "since it was built: built again"]
            sealed = builds_one and (folder / builds.BUILT_MARKER).exists()
            reply = self._ask(record, "load", case)
            if builds_one and not isinstance(reply, Fault) \
                    and builds.within(folder, reply.header.get("extensions") or []):
                if sealed and not builds.intact(folder):  # its import built it again
                    builds.left_to_its_item(folder)
                elif builds.sealable(folder):
                    builds.seal(folder, case.candidate.path)  # built in the worker: seal it here
            if builds_one:
                self._remember_build_failure(case, reply)
        if not isinstance(reply, Fault):  # where the load's time went
            record["load_phases"] = {"worker_start": round(self.sandbox.start_s, 6),
                                     **self.sandbox.start_parts,
                                     **(reply.header.get("phases") or {})}
            note_outside_names(record, reply.header.get("outside_names") or [])
        record.update(tf32_by_candidate=not isinstance(reply, Fault) and bool(reply.header.get("tf32")),
                      extension="none", extension_error=None,
                      upstream=upstream.UpstreamVerdict(self.settings.upstream_rules,
                                                        compiled=not isinstance(reply, Fault),
                                                        correct=False).as_dict())
        if builds_one:
            loaded = [] if isinstance(reply, Fault) else reply.header.get("extensions") or []
            log = reply.details if isinstance(reply, Fault) else reply.log
            state, error = builds.extension_status(folder, loaded, self.started_s, log)
            record.update(extension=state, extension_error=error)
        if isinstance(reply, Fault):
            record.update(compiled=False, correct=False, status=reply.status, error=reply.message)
            return Outcome(reply.status, reply.message, reply.details, record=record)
        record.update(compiled=True)
        return Outcome(faults.PASSED, record=record)

    def _device_aside(self):
        """The running stage's device hold stepped aside, for a wait that needs no GPU."""
        hold = self.sandbox.hold
        return hold.stepped_aside() if hold is not None else contextlib.nullcontext()

    def _remember_build_failure(self, case: Case, reply) -> str:
        """A compiler failure in the worker is not run again for the same source. Returns the
        compiler lines recorded now ('' when none were)."""
        log = reply.details if isinstance(reply, Fault) else reply.log
        loaded = [] if isinstance(reply, Fault) else reply.header.get("extensions") or []
        folder = Path(self._candidate_env(case)["TORCH_EXTENSIONS_DIR"])
        return builds.failure(folder) if builds.remember_failure(folder, log or "", loaded) \
            else ""

    def _await_build(self, case: Case) -> None:
        """Wait until the run's build pool is done with the candidate's build folder. This
        happens before the device lock is taken: a build can take a minute, and a timing
        waiting for the device (and all work queued behind it) would wait as long."""
        if case.candidate is None:
            return
        source = case.candidate.path.read_text(errors="replace")
        if not builds.needs_build(source) or (self.device == "cpu" and needs_cuda(source)):
            return
        started = time.monotonic()
        self.wait_for_build(Path(self._candidate_env(case)["TORCH_EXTENSIONS_DIR"]))
        self._build_waits[case] = time.monotonic() - started

    def _correct(self, case: Case) -> Outcome:
        compiled = self.compile(case)
        if not compiled.passed:
            return skipped_after(compiled, "compile")
        record = dict(compiled.record)
        trials = _Trials(self, case, record)
        outcome: Outcome | None = None
        for trial in range(self.settings.trials):
            result = trials.run(trial)
            if outcome is None and result is not None:
                outcome = result  # our verdict; the trials go on only for upstream's
            if outcome is not None and trials.upstream_correct is not True:
                break  # upstream's verdict is settled too
        record["upstream"] = {**record["upstream"], "correct": trials.upstream_correct}
        if outcome is None and self.order_trials:
            outcome = trials.order_trials()
        elif outcome is not None and trials.stale and self.order_trials and makes_streams(record):
            outcome = trials.race_behind(outcome)
        if outcome is not None:
            return outcome
        record.update(correct=True, status=faults.PASSED, error=None)
        return Outcome(faults.PASSED, record=record)

    def _speed(self, case: Case) -> Outcome:
        """Time baseline and candidate in turns, then check what the timing returned (the
        timed outputs, the harness's clock, the baseline's own pace), attribute kernels, and
        give the verdict."""
        checked = self.correct(case)
        if not checked.passed:
            skipped = skipped_after(checked, "correct")
            if (skipped.record.get("upstream") or {}).get("correct"):  # upstream would time it
                self._time_for_upstream(case, skipped.record)
            return skipped
        record = dict(checked.record)
        notes: list[str] = []
        seeds = self._timing_seeds()
        started = time.perf_counter()
        facts = self._problem_facts(case, seeds)
        self._set_reference_aside(case, seeds)
        charge(record, "facts", time.perf_counter() - started, "timing_phases")
        record["baseline_wall_time"] = facts["wall_s"]
        how = self._timing_mode(facts["wall_s"], notes)
        measured = self._time(case, record, seeds, how)
        if isinstance(measured, Fault) and how == "graph":
            notes.append(f"CUDA graph capture failed ({measured.message}): timed with events")
            how = "events"
            measured = self._time(case, record, seeds, how)
        if isinstance(measured, Fault):
            message = f"while timing: {measured.message}"
            record.update(status=measured.status, error=message)
            return Outcome(measured.status, message, measured.details, record=record)
        reply, baseline_samples = measured
        samples = reply.header["samples_s"]
        record["upstream"] = {**record["upstream"], "speedup": upstream.speedup_of_means(
            baseline_samples, samples["candidate"])}
        baseline = timing.summarize(baseline_samples)
        candidate = timing.summarize(samples["candidate"])
        ratio = timing.speedup(baseline, candidate)
        record.update(speedup=ratio, baseline_time=baseline.median_s,
                      candidate_time=candidate.median_s, timing=how,
                      timing_stopped=reply.header.get("stopped"),
                      baseline_source="interleaved" if "baseline" in samples else "cache",
                      baseline_stats=baseline.as_dict(), candidate_stats=candidate.as_dict(),
                      speedup_interval=list(timing.speedup_interval(baseline, candidate)))
        if reply.header.get("reused_output"):
            notes.append("returns the same buffer on every call (as a replayed CUDA graph's "
                         "static output does): an output the caller keeps changes at its next call")
        return self._check_timing(case, record, reply, seeds, how, ratio, baseline, candidate,
                                  facts["wall_s"], notes)

    def _check_timing(self, case: Case, record: dict, reply, seeds: list[int], how: str,
                      ratio: float, baseline: timing.Summary, candidate: timing.Summary,
                      here_s: float, notes: list[str]) -> Outcome:
        """What a timing returned, checked: its outputs, the harness's clock, the baseline's
        pace in the candidate's process. The verdict when one fails; otherwise the speedup
        they leave stands for _attribute."""
        samples = reply.header["samples_s"]
        started = time.perf_counter()
        caught = self._check_timed_outputs(case, record, reply)
        charge(record, "check_outputs", time.perf_counter() - started, "timing_phases")
        if caught is not None:
            return caught
        started = time.perf_counter()
        try:
            return self._check_clocks(case, record, samples, seeds, how, ratio, baseline,
                                      candidate, here_s, notes)
        finally:
            charge(record, "check_clock", time.perf_counter() - started, "timing_phases")

    def _check_clocks(self, case: Case, record: dict, samples: dict, seeds: list[int],
                      how: str, ratio: float, baseline: timing.Summary,
                      candidate: timing.Summary, here_s: float, notes: list[str]) -> Outcome:
        """The harness's clock against the timing (_check_clock), and the baseline's pace in
        the candidate's process against this one's (_unslow_baseline)."""
        baseline_median = baseline.median_s if "baseline" in samples else None
        clocked = self._check_clock(case, record, candidate.median_s, seeds, how,
                                    baseline_median, notes)
        if isinstance(clocked, Outcome):
            return clocked
        wall_s, worker_baseline_s, host_slowed = clocked
        if "baseline" in samples:
            if worker_baseline_s is None:  # not measured by the clock check
                worker_baseline_s = self._burst_wall_s(record, case, "baseline",
                                                       baseline.median_s, seeds)
            ratio = self._unslow_baseline(case, record, seeds, ratio, here_s,
                                          worker_baseline_s, notes)
        if self.device == "cpu" or host_slowed:
            ratio = self._bound_by_harness_clock(case, record, seeds, ratio, wall_s,
                                                 worker_baseline_s, notes)
        # unknown unless read
        record.update(custom_kernels=None, torch_only=None, kernel_attribution=None)
        self._timed[case] = (ratio, notes, samples["candidate"])
        return Outcome(faults.PASSED, record=record)  # speed() goes on to _attribute

    def _attribute(self, case: Case) -> Outcome:
        """After the timing, under the shared lock: which kernels ran (a CUDA graph of one
        call, a CUPTI trace, or a profiler session), the speed of light, and the verdict.
        Nothing here is timed, and a profiler session takes seconds: holding the device alone
        for it would make every other worker wait. (--kb-profile's Nsight Compute runs after
        it, alone.)"""
        ratio, notes, candidate_samples = self._timed.pop(case)
        record = dict(self._done[(case, "speed")].record)
        traits = self._problem_traits(case, self._timing_seeds(), record)
        self._let_timings_in(record)
        self._note_kernels(case, record, traits["kernels"],
                           profiler=worth_profiling(ratio, record.get("speedup_interval"),
                                                    self.settings.p, self.settings.require_kernel))
        self._note_speed_of_light(record, traits, record["candidate_time"])
        record["flags"] = record.get("flags", []) + notes + self._flags(record, ratio)
        return self._speed_verdict(record, ratio, candidate_samples)

    def _profile_under_ncu(self, case: Case, judged: Outcome) -> Outcome:
        record = dict(judged.record)
        self._note_profile(case, record)
        return replace(judged, record=record)

    def _check_timed_outputs(self, case: Case, record: dict, reply) -> Outcome | None:
        """A cheat verdict when the output of a timed call, as returned, is wrong for its
        inputs (cached, replayed, or read before the inputs were written)."""
        self._reference_output(case, self._input_seed(0))  # the problem's facts, loaded
        if self._stochastic:
            record["flags"] = record.get("flags", []) + [
                "timed outputs not checked: the reference draws random numbers in forward, so "
                "only the seeded correctness trials have one right answer"]
            return None
        calls = reply.header.get("calls")
        for item, value in zip(reply.header["timed_outputs"], reply.extra["timed_outputs"]):
            seed = item["seed"]
            verdict = self._judge(case, seed, value, record, calls, item.get("call"))
            if verdict is not None:
                return self._cheat(record, "the output of a timed call is wrong (cached, replayed "
                                   f"or reused?): input seed {seed}: {verdict.message}")
        return None

    def _check_clock(self, case: Case, record: dict, reported_s: float, seeds: list[int],
                     how: str, baseline_median_s: float | None,
                     notes: list[str]) -> Outcome | tuple[float, float | None, bool]:
        """The candidate's seconds per call by this process's own clock (and the baseline's in
        the same worker, where this measured it, and whether a busy host excused its burst), or
        the verdict when its reported median cannot be true.

        A graph replay is timed by this harness's own code and leaves no launch gaps, so eager
        calls may rightly take longer than it; work a graph did not capture fails the output
        check. A hiccup of the host can slow one burst, a tampered timer slows every one: the
        fastest of the candidate's bursts is what counts (up to BURST_TRIES, then HOST_CHECKS
        more, each after one of the baseline's). A burst too slow for the report is
        excused when timing.host_was_slow says so, the speedup then bounded by the harness's
        clock (_bound_by_harness_clock): on a CPU, where other work on the host slows bursts
        more than single timed calls, and on a GPU, where a model whose calls are bound by
        their launches can run its calls back to back at up to twice its timed calls' time
        (the eager reference of SwinTransformerV2 did, 1.6-2.2x in three runs of four) and a
        candidate like it then read as hiding work.
        """
        calls, wall_s, timed_s = burst_calls(reported_s), float("inf"), float("inf")

        def candidate_burst() -> Outcome | None:
            """One more burst of the candidate's, the fastest kept (wall_s, timed_s)."""
            nonlocal wall_s, timed_s
            burst = self._ask(record, "burst", case, calls=calls, input_seeds=seeds)
            if isinstance(burst, Fault):
                message = f"while timing: {burst.message}"
                record.update(status=burst.status, error=message)
                return Outcome(burst.status, message, burst.details, record=record)
            if burst.wall_s / calls < wall_s:
                wall_s = burst.wall_s / calls
                timed_s = (burst.header.get("timed_s") or float("inf")) / calls
            return None

        for _ in range(BURST_TRIES):
            failed = candidate_burst()
            if failed is not None:
                return failed
            if how != "events" or timing.plausible(reported_s, wall_s, self.device):
                break
        # A host whose load changes can slow the candidate's bursts and spare the baseline's
        # after them: each baseline burst is followed by one of the candidate's, so that the
        # next comparison sees the same host. Hidden work slows every candidate burst alike.
        baseline_s = baseline_median_s if how == "events" else None
        for _ in range(HOST_CHECKS):
            if baseline_s is None or timing.plausible(reported_s, wall_s, self.device):
                break
            baseline_wall_s = self._burst_wall_s(record, case, "baseline", baseline_s, seeds)
            if baseline_wall_s is None:
                break
            if timing.host_was_slow(reported_s, wall_s, timed_s, baseline_s,
                                    baseline_wall_s, self.device):
                record["candidate_wall_time"] = wall_s
                notes.append(f"bursts ran {wall_s / reported_s:.1f}x the reported time, the "
                             "baseline's as much (a busy or launch-bound host): the speedup is "
                             "bounded by the harness's clock")
                return wall_s, baseline_wall_s, True
            failed = candidate_burst()
            if failed is not None:
                return failed
        record["candidate_wall_time"] = wall_s
        if how == "events" and not timing.plausible(reported_s, wall_s, self.device):
            return self._cheat(record, "candidate time does not add up: reported "
                               f"{reported_s * 1e6:.2f} us per call, but the harness's "
                               f"own clock saw {wall_s * 1e6:.2f} us per "
                               "call (a tampered timer, or work on another stream or thread)")
        return wall_s, None, False

    def _speed_verdict(self, record: dict, ratio: float, candidate_samples: list[float]) -> Outcome:
        """passed, slower, or torch_only (under --kb-require-kernel), for a checked timing."""
        p = self.settings.p
        if record.get("speedup") is None:  # the harness's clock could not settle the time
            record["status"] = faults.INCONCLUSIVE
            return Outcome(faults.INCONCLUSIVE, "the harness's clock could neither confirm nor "
                           "refute the reported time (a busy host): no speedup", skipped=True,
                           record=record)
        if self.settings.require_kernel and record.get("torch_only"):
            record["status"] = faults.TORCH_ONLY
            return Outcome(faults.TORCH_ONLY, "no kernel of the candidate's own ran "
                           "(--kb-require-kernel): it only called PyTorch", record=record)
        if ratio > p:
            return Outcome(faults.PASSED, record=record, candidate_samples_s=candidate_samples)
        record["status"] = faults.SLOWER  # correct, but not faster than p: what fast_p counts
        message = (f"speedup {ratio:.3f} is not above p={p:g} (baseline "
                   f"{record['baseline_time'] * 1e6:.1f} us, candidate "
                   f"{record['candidate_time'] * 1e6:.1f} us)")
        if timing.below(ratio, record.get("speedup_interval"), p, self.device):
            return Outcome(faults.SLOWER, message, record=record,
                           candidate_samples_s=candidate_samples)
        # Not shown to be slower: the item neither passes (fast_p does not count it) nor fails,
        # so the exit status does not turn on noise.
        why = timing.resolution_words(ratio, record.get("speedup_interval"), p, self.device)
        record["flags"] = [*record.get("flags", []), f"{INCONCLUSIVE}: not shown to be at or "
                           f"below p={p:g}: {why}"]
        return Outcome(faults.SLOWER, f"{INCONCLUSIVE}: {message}; {why}", skipped=True,
                       record=record, candidate_samples_s=candidate_samples)

    def _time_for_upstream(self, case: Case, record: dict) -> None:
        """Time a candidate that only upstream's rules pass (e.g. it changes its inputs), for
        the upstream speedup alone: events, means, no checks, and no more rounds than
        upstream's scripts time (these timings hold the device alone, for a figure beside the
        verdict: 74 of a CUDA-L1 run's 185, most of them races)."""
        seeds = self._timing_seeds()
        # the problem and its reference loaded; not its facts (_problem_facts): a burst, a
        # graph capture and a cost count, under the device held alone, that no verdict reads
        self._reference_output(case, seeds[0])
        measured = self._time(case, record, seeds, "events", max_rounds=UPSTREAM_PERF_TRIALS)
        if not isinstance(measured, Fault):
            reply, baseline_samples = measured
            record["upstream"] = {**record["upstream"], "speedup": upstream.speedup_of_means(
                baseline_samples, reply.header["samples_s"]["candidate"])}

    def _unslow_baseline(self, case: Case, record: dict, seeds: list[int], ratio: float,
                         here_s: float, worker_s: float | None, notes: list[str]) -> float:
        """The candidate's process can slow the baseline (or merely disturb it). A burst of
        baseline calls there and one here, both on this process's clock, must agree; when they
        do not, the baseline's median is scaled by how much faster it ran here, so a slowed
        baseline buys no speedup. A hiccup of the host (a compiler, another worker starting)
        can slow one burst there, a candidate that slows the baseline slows every one: up to
        BURST_TRIES bursts there, the fastest counting, each after the first followed by one
        here (a host that got busier since slows both processes alike). One slowed burst of
        a launch-bound baseline, 3.2x, once read a 1.2x candidate of CUDA-L1's as 0.38x.

        A worker the host runs slowly for seconds runs everything slowly, the candidate's own
        calls in its timing too, and its speedup stands: the harness's own pure-Python work,
        timed there and here (_worker_pace), says how much of the baseline's slowness is the
        process's, and only the rest is held against the candidate. A patch of the baseline's
        operators slows none of that work. Three honest launch-bound candidates of CUDA-L1's
        read `slower` at 0.38-0.67x from bursts there 2.7-3.4x slower than here.

        What a slowed baseline buys lies in the timing's own median of it: where that median
        (of eager calls, timed with events) fits this process's figure as a burst there must,
        nothing is scaled, whatever the bursts after the timing saw (four of six such records
        of CUDA-L1's had such a median, and the scaling cut honest speedups: 1.22x to 0.38x,
        3.9x to 1.3-1.9x, 6.5x to 2.9x).
        """
        if worker_s is None:
            return ratio
        there_s = worker_s

        def fits(here: float, there: float) -> bool:
            """Whether a time per call there can be the baseline's, given its time here."""
            if self.device == "cpu":  # honest bursts of one model differed by up to 2.5x here
                return there <= CPU_PROCESS_SPREAD * here
            return timing.plausible(here, there, self.device)

        # A graph's replay is no eager call: its median says nothing of the eager figure here.
        if record.get("timing") == "events" and fits(here_s, record["baseline_time"]):
            return ratio

        sets: list[list] = []
        paces: list[tuple[float, float]] = []  # (there, here), after each burst there
        for _ in range(BURST_TRIES - 1):
            if fits(here_s, there_s):
                return ratio
            again = self._burst_wall_s(record, case, "baseline", record["baseline_time"], seeds)
            if again is None:
                break
            there_s = min(there_s, again)
            paces.append(self._worker_pace(record, case))
            sets = sets or [loading.make_inputs(self._problem, seed, self.device)
                            for seed in seeds]
            here_s = self._baseline_wall_s(case, sets)
        if fits(here_s, there_s):
            return ratio
        measured = [pace for pace in paces if pace[0] > 0]
        slower = max(1.0, min(t for t, _ in measured) / min(h for _, h in measured)) \
            if measured else 1.0
        said = (f"baseline took {there_s * 1e6:.1f} us per call in the candidate's process but "
                f"{here_s * 1e6:.1f} us here" + (f", the harness's own code {slower:.2f}x as long"
                                                  if measured else ""))
        if fits(here_s * slower, there_s):
            notes.append(f"{said}: the process ran slowly, not the baseline alone; the timing's "
                         "speedup stands")
            return ratio
        scale = min(1.0, here_s * slower / there_s)
        baseline_s = record["baseline_time"] * scale
        notes.append(f"{said}: its median is scaled by {scale:.3f}")
        ratio = baseline_s / record["candidate_time"]
        record.update(speedup=ratio, baseline_time=baseline_s, speedup_interval=None)
        return ratio

    def _worker_pace(self, record: dict, case: Case) -> tuple[float, float]:
        """(seconds there, seconds here) for timing.host_pace, each on this process's clock;
        (0, 0) where the worker did not answer."""
        reply = self._ask(record, "pace", case, steps=timing.PACE_STEPS)
        started = time.perf_counter()
        timing.host_pace()
        here_s = time.perf_counter() - started
        return (0.0, 0.0) if isinstance(reply, Fault) else (reply.wall_s, here_s)

    def _bound_by_harness_clock(self, case: Case, record: dict, seeds: list[int], ratio: float,
                                candidate_wall_s: float, baseline_wall_s: float | None,
                                notes: list[str]) -> float:
        """On a CPU the worker's timer is the host clock, which a candidate can shift (and on a
        GPU, a candidate whose burst was excused may hide some work from its events): the
        harness's own clock bounds the speedup, timing bursts of both sides in the worker.

        Where bursts are cheap, pairs of them (CPU_CLOCK_PAIRS, in alternating order) are
        measured until timing.clock_verdict decides from each side's fastest, confirmed: the
        reported speedup stands or is replaced by the bursts'; on a host too busy to confirm
        them within CPU_CLOCK_MAX_PAIRS, the record gets no speedup (status inconclusive).
        Where bursts are not cheap, a reported speedup within CPU_CLOCK_CLOSE of the first
        pair stands, and otherwise CPU_CLOCK_RETRIES more pairs are read the same way.
        """
        medians = {"baseline": record["baseline_time"], "candidate": record["candidate_time"]}
        if baseline_wall_s is None:
            baseline_wall_s = self._burst_wall_s(record, case, "baseline", medians["baseline"],
                                                 seeds)
            if baseline_wall_s is None:
                return ratio
        walls = {"baseline": [baseline_wall_s], "candidate": [candidate_wall_s]}
        cheap = sum(burst_calls(median) * median for median in medians.values()) \
            < CPU_CONFIRM_BELOW_S
        if not cheap and ratio <= CPU_CLOCK_CLOSE * baseline_wall_s / candidate_wall_s:
            return ratio
        more = CPU_CLOCK_PAIRS - 1 if cheap else CPU_CLOCK_RETRIES
        while True:
            for _ in range(more):
                if not self._burst_pair(record, case, medians, seeds, walls):
                    return ratio
            verdict, clock_ratio = timing.clock_verdict(ratio, walls["baseline"],
                                                        walls["candidate"], CPU_CLOCK_SLACK)
            if verdict != "undecided" or not cheap \
                    or len(walls["candidate"]) >= CPU_CLOCK_MAX_PAIRS:
                break
            more = CPU_CLOCK_PAIRS  # a busy host: more pairs, until each side's fastest recurs
        if verdict == "stands":
            return ratio
        record["candidate_wall_time"] = min(walls["candidate"])
        if verdict == "undecided":
            notes.append(f"{faults.INCONCLUSIVE}: reported speedup {ratio:.3f}; the harness's "
                         f"bursts over {len(walls['candidate'])} pairs (a busy host) never "
                         "repeated their fastest, so they neither confirm nor refute it: no "
                         "speedup")
            record.update(speedup=None, speedup_interval=None)
            return ratio
        notes.append(f"reported speedup {ratio:.3f}, but the harness's clock saw "
                     f"{clock_ratio:.3f} (the fastest bursts of {len(walls['candidate'])} "
                     "pairs): the speedup uses the harness's clock")
        record.update(speedup=clock_ratio, baseline_time=min(walls["baseline"]),
                      candidate_time=min(walls["baseline"]) / clock_ratio, speedup_interval=None)
        return clock_ratio

    def _burst_pair(self, record: dict, case: Case, medians: dict[str, float], seeds: list[int],
                    walls: dict[str, list[float]]) -> bool:
        """One burst of each side back to back, in turns the candidate's or the baseline's
        first; their times per call join walls. False where a burst failed."""
        first = ("candidate", "baseline") if len(walls["candidate"]) % 2 == 1 \
            else ("baseline", "candidate")
        for side in first:
            measured = self._burst_wall_s(record, case, side, medians[side], seeds)
            if measured is None:
                return False
            walls[side].append(measured)
        return True

    def _burst_wall_s(self, record: dict, case: Case, side: str, median_s: float,
                      seeds: list[int]) -> float | None:
        """One side's time per call over a burst in the worker, on this process's clock."""
        calls = burst_calls(median_s)
        burst = self._ask(record, "burst", case, calls=calls, input_seeds=seeds, side=side)
        return None if isinstance(burst, Fault) else burst.wall_s / calls

    def _timing_mode(self, baseline_wall_s: float, notes: list[str]) -> str:
        """events or graph, for this problem, from --kb-timing and the device."""
        wanted = self.settings.timing
        if self._lockstep is not None and wanted != "events":
            # a replayed graph reads the state its capture saw, never the state calls leave
            notes.append("timed with events: the reference keeps state between calls")
            return "events"
        if not self.device.startswith("cuda"):
            if wanted == "graph":
                notes.append("CUDA graphs need a CUDA device: timed with events")
            return "events"
        if wanted == "auto":
            return "graph" if baseline_wall_s < AUTO_GRAPH_BELOW_S else "events"
        return wanted

    def _time(self, case: Case, record: dict, seeds: list[int], how: str,
              max_rounds: int | None = None):
        """(reply, baseline samples) from the worker, or a Fault; a failed capture is a Fault.
        max_rounds bounds the rounds the worker times (None: the budget and the RSE do)."""
        cached = self._cached_baseline(case, seeds, how)
        if isinstance(cached, Fault):
            return cached
        # A timing for a verdict may stop once it is decided; upstream's figure times its rounds.
        thresholds = self._speedup_thresholds() if max_rounds is None else []
        reply = self._ask(record, "time", case, input_seeds=seeds, timing=how,
                          with_baseline=cached is None, budget_s=self.settings.time_budget_s,
                          min_rounds=self.settings.min_rounds, max_rounds=max_rounds,
                          target_rse=self.settings.target_rse, baseline=self.settings.baseline,
                          thresholds=thresholds)
        if isinstance(reply, Fault):
            return reply
        for phase, seconds in (reply.header.get("phases") or {}).items():
            charge(record, phase, float(seconds), "timing_phases")
        if "graph_error" in reply.header:
            self.sandbox.stop_child()  # a failed capture may leave the context unusable
            return Fault(faults.RUNTIME_ERROR, reply.header["graph_error"])
        samples = reply.header["samples_s"]
        return reply, cached if cached is not None else samples["baseline"]

    def _speedup_thresholds(self) -> list[float]:
        """The speedups a verdict or the summary compares against: fast_0, fast_1, p, and the
        speedup above which a record is flagged."""
        return sorted({*summary_ps(self.settings.p), self.settings.flag_speedup})

    def _cached_baseline(self, case: Case, seeds: list[int], how: str):
        """Baseline samples from --kb-baseline-cache (timed here when missing); None: no cache."""
        folder = self.settings.baseline_cache
        if folder is None:
            return None
        fields = self._baseline_fields(case, how)
        now = time.time()
        key = baselines.cache_key(fields)
        # --kb-retime-baseline re-times each baseline once in this run, not once per candidate.
        if not self.settings.retime_baseline or key in self._retimed:
            found = baselines.read(folder, fields, self.settings.baseline_max_age_s, now)
            if found is not None:
                return found
        baseline = self._baseline_model(case)
        sets = [loading.make_inputs(self._problem, seed, self.device) for seed in seeds]
        try:
            side = timing.RotatingSide(baseline, sets, how == "graph", self.device)
        except Exception as exc:  # noqa: BLE001 - e.g. the reference cannot be captured
            return Fault(faults.RUNTIME_ERROR, f"the baseline: {faults.describe_exception(exc)}")
        measured = timing.measure_interleaved({"baseline": side.turn(timing.poison)}, self.device,
                                              self.settings.time_budget_s,
                                              self.settings.min_rounds, self.settings.target_rse)
        samples = measured.samples_s["baseline"]
        baselines.write(folder, fields, samples, now)
        self._retimed.add(key)
        return samples

    def _baseline_fields(self, case: Case, how: str) -> dict:
        import torch

        fields = {"problem": baselines.source_digest(case.problem.path),
                  "torch": torch.__version__, "cuda": torch.version.cuda,
                  "device": self.device.split(":")[0], "baseline": self.settings.baseline,
                  "timing": how, "mode": self.settings.mode, "seed": self.settings.seed,
                  "dtype": str(torch.get_default_dtype()), "input_sets": TIMING_INPUT_SETS,
                  "precision": self.settings.precision, "tf32": self.settings.tf32}
        if self.device.startswith("cuda"):
            fields["gpu"] = torch.cuda.get_device_name(self.device)
            fields["driver"] = driver_version()
        return fields

    def _problem_facts(self, case: Case, seeds: list[int]) -> dict:
        """What this process measures of the baseline once per problem, with no candidate code
        running and the device held alone: its wall time per call."""
        self._reference_output(case, seeds[0])  # loads the problem and its reference model
        if "wall_s" not in self._per_problem:
            sets = [loading.make_inputs(self._problem, seed, self.device) for seed in seeds]
            self._per_problem["wall_s"] = self._baseline_wall_s(case, sets)
        return self._per_problem

    def _problem_traits(self, case: Case, seeds: list[int], record: dict | None = None) -> dict:
        """What the verdict reads of the problem, once: the kernels its eager reference
        launches, its cost and its dtype. Nothing in it is timed, so it is read under the
        shared hold of the attribute stage, not while a timing holds the device alone (or
        before a large reference is let go, _set_reference_aside). On a large model each
        piece takes seconds: timings that ask meanwhile run between them (their wait is
        charged to record)."""
        self._reference_output(case, seeds[0])  # loads the problem and its reference model
        if "cost" not in self._per_problem:
            first, last = (loading.make_inputs(self._problem, seed, self.device)
                           for seed in (seeds[0], seeds[-1]))
            kernels = None
            if self.device.startswith("cuda"):
                self._let_timings_in(record)
                kernels = launched_kernels(self._reference_model(), first, last, self.device)[0]
                self._let_timings_in(record)
            self._per_problem.update({
                "kernels": kernels,
                "cost": roofline.problem_cost(self._reference_model(), first),
                "dtype": input_dtype(first),
            })
        return self._per_problem

    def _let_timings_in(self, record: dict | None) -> None:
        """The timings that wait for the device run now, before this stage's next piece of
        GPU work: they would wait for the whole stage otherwise, with every other worker
        stopped behind them (level 3's problem traits held 33 s of a CUDA-L1 run that way,
        docs/performance.md)."""
        waited = self.sandbox.let_timings_in()
        if waited and record is not None:
            charge(record, "stopped", waited)

    def _baseline_wall_s(self, case: Case, sets: list[list]) -> float:
        """The baseline's time per call on this process's own clock, over a burst of calls."""
        baseline = self._baseline_model(case)
        timing.run_burst(baseline, sets, 1, self.device)  # warm (and compile, if asked)
        started = time.perf_counter()
        timing.run_burst(baseline, sets, 3, self.device)
        probe_s = time.perf_counter() - started
        if probe_s >= BURST_TARGET_S:  # already a burst of the length asked for
            return probe_s / 3
        calls = burst_calls(probe_s / 3)
        started = time.perf_counter()
        timing.run_burst(baseline, sets, calls, self.device)
        return (time.perf_counter() - started) / calls

    def _baseline_model(self, case: Case):
        if "baseline_model" not in self._per_problem:
            model = loading.as_baseline(self._reference_model(), self.settings.baseline)
            self._per_problem["baseline_model"] = model
        return self._per_problem["baseline_model"]

    def _note_speed_of_light(self, record: dict, traits: dict, candidate_s: float) -> None:
        dtype = traits["dtype"]
        if dtype not in self._ceilings:
            self._ceilings[dtype] = roofline.measure_ceilings(self.device, dtype)
        cost = traits["cost"]
        for seconds in (record["baseline_time"], candidate_s):
            self._ceilings[dtype] = roofline.raised(self._ceilings[dtype], cost, seconds or 0.0)
        ceilings = self._ceilings[dtype]
        record["speed_of_light"] = {
            **cost.as_dict(), "dtype": dtype, "ceilings": ceilings.as_dict(),
            "baseline_fraction": roofline.fraction(cost, record["baseline_time"], ceilings),
            "candidate_fraction": roofline.fraction(cost, candidate_s, ceilings),
        }

    def _cheat(self, record: dict, message: str) -> Outcome:
        message += stream_hint(record)
        record.update(status=faults.CHEAT, error=message, speedup=None)
        return Outcome(faults.CHEAT, message, record=record)

    def _right_answer(self, case: Case, seed: int, calls: list[int] | None,
                  position: int | None = None) -> Any:
        """The right answer for a call on the draw of seed: the reference's output for that
        draw, or, for a reference that keeps state, its twin's at that call (position,
        default the last) of the candidate's sequence of calls."""
        expected = self._reference_output(case, seed)
        if self._lockstep is None:
            return expected
        if calls is None:
            raise RuntimeError("a lockstep judgement without the candidate's calls")
        return self._lockstep.output_at(calls, position)

    def _judge(self, case: Case, seed: int, got: Any, record: dict | None = None,
               calls: list[int] | None = None,
               position: int | None = None) -> correctness.Verdict | None:
        """None when got is right for the inputs of seed (after the candidate's calls, where
        the reference keeps state: _right_answer); a Verdict saying what is wrong otherwise. A
        pass that needed the float64 reference is noted in record's flags."""
        odd = wire.subclass_names(got)
        if odd:
            return correctness.Verdict(faults.CHEAT, f"returned a {odd[0]}, not a plain "
                                       "torch.Tensor (subclasses can defer or fake work)")
        atol, rtol = self.tolerances(case)
        expected = self._right_answer(case, seed, calls, position)
        verdict = correctness.compare(expected, got, atol, rtol)
        # At fp32 only the whole-tensor rule is read against float64; at fp16 and bf16 any
        # mismatch is (see precision.py). A stateful reference has no float64 twin.
        lowered = self.settings.precision != "fp32" and verdict.status == faults.MISMATCH
        if self._lockstep is None and (verdict.rule == correctness.WHOLE_TENSOR or lowered):
            precise = self._precise_output(case, seed)
            own_error = None if precise is None else correctness.within_rounding(
                expected, got, precise, max(atol, rtol))
            if own_error is not None:
                if record is not None:
                    note_float64_reading(record, self.settings.precision, own_error)
                return None
        return None if verdict.passed else verdict

    def _stale_answer(self, case: Case, trial: int, got: Any,
                      calls: list[int] | None = None) -> int | None:
        """The earlier trial whose inputs a wrong output is the right answer for, if any (in
        lockstep, the right answer at that trial's call).

        A result cached across calls (keyed on a pointer, a shape or a call count) shows up here
        or in the timed calls, depending on where the allocator puts each draw.
        """
        if self._lockstep is not None and calls:
            seeds = [self._input_seed(earlier) for earlier in range(trial)]
            for position, seed in enumerate(calls[:-1], start=1):
                if seed in seeds and self._judge(case, seed, got, calls=calls,
                                                 position=position) is None:
                    return seeds.index(seed)
            return None
        for earlier in range(trial):
            if self._judge(case, self._input_seed(earlier), got) is None:
                return earlier
        return None

    def _judge_inputs(self, case: Case, seed: int, after: Any) -> correctness.Verdict | None:
        """A candidate must leave its inputs as it found them (unless the reference does not)."""
        import torch

        if after is None or self._reference_mutates:
            return None
        pristine = [x for x in loading.make_inputs(self._problem, seed, self.device)
                    if isinstance(x, torch.Tensor)]
        for index, (before, now) in enumerate(zip(pristine, after)):
            if not isinstance(now, torch.Tensor) or now.shape != before.shape \
                    or not torch.equal(now.to(before.device), before):
                return correctness.Verdict(faults.MUTATED_INPUT,
                                           f"input {index} was modified in place by forward")
        return None

    def _note_kernels(self, case: Case, record: dict, baseline_kernels: list[str] | None,
                      profiler: bool) -> None:
        """Which kernels ran (on CUDA only: baseline_kernels is None elsewhere), read from a
        CUDA graph of one call, or where the call cannot be captured, from CUPTI's records of
        one call. Where CUPTI cannot be loaded, a profiler session answers, which costs seconds
        in a fresh process: only when profiler is true.
        """
        if baseline_kernels is None:
            return
        reply = self._ask(record, "profile", case, input_seed=self._input_seed(0),
                          profiler=profiler)
        if isinstance(reply, Fault) or reply.header["kernels"] is None:
            return
        names = reply.header["kernels"]
        source = case.candidate.path.read_text(errors="replace") if case.candidate else ""
        own = custom_kernels(names, baseline_kernels, source)
        record.update(custom_kernels=own, torch_only=not own, launched_kernels=len(names),
                      kernel_attribution=reply.header["attribution"])

    def _note_profile(self, case: Case, record: dict) -> None:
        """Nsight Compute's figures for each kernel of one call (--kb-profile, CUDA only), in
        a process of its own under ncu; why not, where it could not be read."""
        if not (self.settings.profile and self.device.startswith("cuda")):
            return
        started = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="kb-ncu-") as folder:
            request = self.sandbox.profiled(self._header("ncu", case,
                                                         input_seed=self._input_seed(0)),
                                            Path(folder))
            kernels, why = ncu.profile(request, self.sandbox.env,
                                       record.get("custom_kernels") or [],
                                       max(self._deadline - time.monotonic(), 1.0), Path(folder))
        charge(record, "ncu", time.perf_counter() - started)
        record.update(ncu_kernels=kernels, ncu_error=why or None)

    def _flags(self, record: dict, ratio: float) -> list[str]:
        flags = []
        if ratio > self.settings.flag_speedup:
            flags.append(f"speedup above {self.settings.flag_speedup:g}x: check it by hand")
        if record.get("torch_only"):
            flags.append("torch_only: no kernel of its own ran")
        return flags

    # --- helpers --------------------------------------------------------------------------

    def tolerances(self, case: Case) -> tuple[float, float]:
        """The run's tolerances (--kb-atol/--kb-rtol, else the --kb-tolerance profile at this
        precision), unless the manifest documents this problem's own (scaled with the profile)."""
        settings = self.settings
        atol, rtol = precision.run_tolerance(settings.tolerance, settings.precision)
        run = (atol if settings.atol is None else settings.atol,
               rtol if settings.rtol is None else settings.rtol)
        entry = self.overrides.get((case.problem.level, case.problem.problem_id))
        return precision.problem_tolerance(run, entry.atol if entry else None,
                                           entry.rtol if entry else None)

    def _input_seed(self, trial: int) -> int:
        return self.settings.seed + INPUT_SEED_OFFSET + trial

    def _timing_seeds(self) -> list[int]:
        return [self.settings.seed + TIMING_SEED_OFFSET + k for k in range(TIMING_INPUT_SETS)]

    def _ask(self, record: dict, op: str, case: Case, timeout_s: float | None = None, **extra):
        """One request to the candidate's worker; its wall time is charged to the record."""
        header = self._header(op, case, **extra)
        started = time.perf_counter()
        left = max(self._deadline - time.monotonic(), 0.001)
        reply = self.sandbox.request(header, min(timeout_s or left, left))
        charge(record, op, time.perf_counter() - started - self.sandbox.stopped_s)
        if self.sandbox.stopped_s:  # stopped for others' timings: the stage gets that time back
            self._deadline += self.sandbox.stopped_s
            charge(record, "stopped", self.sandbox.stopped_s)
        return reply

    def _header(self, op: str, case: Case, **extra) -> dict:
        assert case.candidate is not None
        return {"op": op, "problem": str(case.problem.path), "candidate": str(case.candidate.path),
                "seed": self.settings.seed, "device": self.sandbox.worker_device,
                "mode": self.settings.mode, "precision": self.settings.precision,
                "tf32": self.settings.tf32, "order_trials": self.order_trials,
                "lockstep": self._lockstep is not None, "env": self._candidate_env(case),
                **extra}

    def _candidate_env(self, case: Case) -> dict[str, str]:
        """The candidate's own extension folder in the build cache (see builds.py)."""
        assert case.candidate is not None
        path = case.candidate.path
        if path not in self._envs:  # read and hashed once, not on every request
            folder = builds.build_folder(self.build_cache, path.read_bytes(),
                                         builds.toolchain(self.arch))
            self._envs[path] = builds.build_env(folder, self.arch)
        return self._envs[path]

    @property
    def order_trials(self) -> bool:
        """Whether the stream-order trials run (--kb-order-trials, on a CUDA device)."""
        return self.settings.order_trials and self.device.startswith("cuda")

    @property
    def build_cache(self) -> Path:
        return self.settings.build_cache or builds.default_cache_root()

    def _reference_output(self, case: Case, seed: int) -> Any:
        """Reference output for an input draw, computed here and kept while the problem stays."""
        import torch

        if self._problem_path != case.problem.path:
            self._problem_path = None  # set once the problem has loaded
            try:
                self._problem = loading.import_file(case.problem.path, "kb_problem")
                self._reference = None
                self._reference_model()
            except Exception as exc:
                raise ProblemError(f"its reference cannot be built: "
                                   f"{faults.describe_exception(exc)}") from exc
            self._problem_path = case.problem.path
            self._expected = {}
            self._problem_checked = False  # for state kept and overflow, at its first output
            self._reference_mutates = False
            self._per_problem = {}
            self._unjudgeable = ""
            self._stochastic = False
            self._lockstep = None
        if seed not in self._expected:
            first = not self._problem_checked
            self._problem_checked = True
            try:
                reference = self._reference_model()  # built before the draw seeds the RNG
                inputs = loading.make_inputs(self._problem, seed, self.device)
                pristine = loading.clone_inputs(inputs)
                with torch.no_grad():
                    self._expected[seed] = reference(*inputs)
                    if first:
                        self._unjudgeable = self._state_kept(case, self._expected[seed], seed) \
                            or self._overflows(self._expected[seed])
            except Exception as exc:
                raise ProblemError(f"its inputs or reference failed: "
                                   f"{faults.describe_exception(exc)}") from exc
            self._reference_mutates |= any(
                isinstance(a, torch.Tensor) and not torch.equal(a, b)
                for a, b in zip(inputs, pristine))
        if self._unjudgeable:
            raise ProblemError(self._unjudgeable)
        return self._expected[seed]

    def _reference_model(self):
        """The loaded problem's reference model, built again (the same seed, so the same
        weights) when it was set aside (_set_reference_aside)."""
        if self._reference is None:
            self._reference = self._fresh_reference()
        return self._reference

    def _set_reference_aside(self, case: Case, seeds: list[int]) -> None:
        """On a CPU, a reference model of more than KEPT_OUTPUTS_BYTES is let go while the
        worker times: the worker then holds two such models (the candidate and its baseline),
        and a third here put L2/68's 1 GiB of weights in memory three times over. Its outputs
        for the timing draws, which the timed outputs are checked against, are computed first;
        anything else that needs it builds it again."""
        if self.device != "cpu" or self.settings.baseline != "eager" or self._reference is None \
                or nested.nbytes(list(self._reference.state_dict().values())) \
                <= KEPT_OUTPUTS_BYTES:
            return
        for seed in seeds:
            self._reference_output(case, seed)
        self._problem_traits(case, seeds)
        self._reference = None
        self._per_problem.pop("baseline_model", None)
        self._per_problem.pop("model64", None)

    def _overflows(self, output: Any) -> str:
        """Why the reference cannot be judged against at a low precision, when its output holds
        NaN or Inf there: inputs or activations beyond the dtype's range (level 3's
        DeepNarrowMLP draws inputs up to 5e5, past fp16's 65504) leave nothing to compare, and
        a NaN answer passes against a NaN reference. "" at fp32, or for a finite output."""
        import torch

        if self.settings.precision == "fp32":
            return ""
        leaves = [t for t in nested.leaves(output) if t.is_floating_point()]
        bad = sum(int((~torch.isfinite(t)).sum()) for t in leaves)
        if not bad:
            return ""
        total = sum(t.numel() for t in leaves)
        return (f"at {self.settings.precision} its reference output has {bad} of {total} "
                f"elements NaN/Inf (inputs or activations beyond the range of "
                f"{self.settings.precision}): it cannot be judged at this precision")

    def _state_kept(self, case: Case, output: Any, seed: int) -> str:
        """Why the reference cannot be judged against, when a second call on the same draw
        (same inputs, same random state) answers otherwise: its forward keeps state (upstream
        v0's VanillaRNN overwrites its hidden state), so the expected answer depends on how
        often a model was called, and a candidate that keeps the same state would fail its
        timed calls for being faithful. "" for a reference that answers alike."""
        inputs = loading.make_inputs(self._problem, seed, self.device)
        before = loading.rng_states(self.device)
        again = self._reference_model()(*inputs)
        atol, rtol = self.tolerances(case)
        verdict = correctness.compare(output, again, atol, rtol)
        if not differs_elementwise(verdict):
            # A reference that draws random numbers in forward (train-mode dropout) has one
            # right answer per seeded trial, none for the unseeded timed calls: when forward
            # moved the random state, a third call without repeating it tells.
            if loading.rng_states(self.device) != before:
                self._stochastic = differs_elementwise(correctness.compare(
                    output, self._reference_model()(*inputs), atol, rtol))
            return ""
        fresh = self._fresh_reference
        if lockstep.reproducible(fresh, inputs, lambda a, b: not differs_elementwise(
                correctness.compare(a, b, atol, rtol))):
            self._lockstep = Lockstep(fresh, lambda draw: loading.make_inputs(
                self._problem, draw, self.device))
            return ""
        return ("its reference answers the same inputs differently on a second call (its "
                "forward keeps state between calls), and two fresh references called alike "
                "answer differently, so no candidate can be judged against it: "
                + verdict.message.splitlines()[0])

    def _fresh_reference(self):
        """A new reference model, as the candidate's is built: same seed, same weights."""
        init_args = loading.make_init_args(self._problem, self.settings.seed, self.device)
        return loading.build_model(self._problem.Model, init_args, self.settings.seed,
                                   self.device, self.settings.mode)


    def _precise_output(self, case: Case, seed: int) -> Any:
        """The reference's output for seed computed in float64 (a copy of the reference model
        and its floating inputs cast), or None where the reference cannot run in float64."""
        import copy

        import torch

        self._reference_output(case, seed)  # loads the problem (and resets _per_problem)
        cache = self._per_problem.setdefault("precise", {})
        if seed not in cache:
            try:
                if "model64" not in self._per_problem:
                    self._per_problem["model64"] = copy.deepcopy(self._reference_model()).double()
                inputs = [x.double() if isinstance(x, torch.Tensor) and x.is_floating_point()
                          else x for x in loading.make_inputs(self._problem, seed, self.device)]
                with torch.no_grad():
                    cache[seed] = self._per_problem["model64"](*inputs)
            except Exception:  # an op without a float64 kernel: the fp32 rule stands
                cache[seed] = None
        return cache[seed]


class _Trials:
    """The correctness trials of one case: our verdict, and upstream's beside it.

    run(t) returns None when trial t passes our checks, else the failing Outcome (once the
    record says so). upstream_correct follows upstream's rules over every trial run: False once
    a trial fails them, None when a trial's output cannot be read (a tensor subclass).
    """

    def __init__(self, evaluator: Evaluator, case: Case, record: dict):
        self.evaluator, self.case, self.record = evaluator, case, record
        self.budget = evaluator.settings.timeout_s
        self.upstream_correct: bool | None = True
        self.failed = False
        # what our failing trial returned, when it was the answer for an earlier trial's inputs
        self.stale = ""

    def run(self, trial: int) -> Outcome | None:
        ev, case, record = self.evaluator, self.case, self.record
        seed = ev._input_seed(trial)
        ev._reference_output(case, seed)  # the problem first (a ProblemError is its own)
        reply = ev._ask(record, "run", case, self.budget, input_seed=seed,
                        settle_inputs=ev.order_trials)
        if record.get("extension") not in (None, "none"):  # it builds: maybe at this call
            recorded = ev._remember_build_failure(case, reply)
            if recorded and not record.get("extension_error"):  # it failed at this call
                record["extension_error"] = recorded
        if isinstance(reply, Fault):
            self.upstream_correct = False
            hint = graph_hint(record) if reply.status == faults.CUDA_ERROR and trial else ""
            return self._fail(reply.status, f"trial {trial}: {reply.message}{hint}",
                              reply.details)
        self.budget = max(self.budget - reply.wall_s, 0.001)
        if reply.header.get("tf32"):
            record["tf32_by_candidate"] = True  # switched on in forward
        if record.get("extension") in ("failed", "not_loaded") \
                and reply.header.get("extensions"):  # built or loaded at its first call
            state, _ = builds.extension_status(
                Path(ev._candidate_env(case)["TORCH_EXTENSIONS_DIR"]),
                reply.header["extensions"], ev.started_s, "")
            record.update(extension=state, extension_error=None)
        calls = reply.header.get("calls")
        if ev._lockstep is not None and lockstep.FLAG not in record.get("flags", []):
            record["flags"] = [*record.get("flags", []), lockstep.FLAG]
        theirs = upstream.allclose_only(ev._right_answer(case, seed, calls), reply.value,
                                        ev.settings.upstream_rules, ev.settings.precision)
        if theirs is False or self.upstream_correct is False:
            self.upstream_correct = False
        elif theirs is None:
            self.upstream_correct = None
        verdict = ev._judge(case, seed, reply.value, record, calls)
        if verdict is None and not ev.settings.allow_input_changes:
            verdict = ev._judge_inputs(case, seed, reply.extra.get("inputs_after"))
        if verdict is not None and verdict.status == faults.MISMATCH:
            earlier = ev._stale_answer(case, trial, reply.value, calls)
            if earlier is not None:
                returned = f"returned the answer for the inputs of trial {earlier}"
                self.stale = self.stale or ("" if self.failed else f"trial {trial} {returned}")
                verdict = correctness.Verdict(faults.CHEAT, f"{returned} (an output cached or "
                                              "replayed across calls)")
        if verdict is None:
            return None
        hint = stream_hint(record) if verdict.status == faults.CHEAT else ""
        return self._fail(verdict.status,
                          f"trial {trial} (input seed {seed}): {verdict.message}{hint}")

    def order_trials(self) -> Outcome | None:
        """After every trial passed: the stream-order trials (ordering.py) on fresh inputs, the
        second only for a candidate that made streams of its own. Ours only: upstream's rules
        know no such trial."""
        found = self._unordered()
        return None if found is None else self._fail(*found)

    def race_behind(self, stale: Outcome) -> Outcome:
        """A trial's answer for an earlier trial's inputs, from a candidate that makes streams:
        a cache, or work on an unordered stream that read the memory an earlier trial's
        buffers left there before its own inputs were written (L1/56 of CUDA-L1 read as
        either). Its stream-order trials tell them apart: `race` when one fails, the cache's
        `cheat` when they pass."""
        found = self._unordered()
        if found is None or found[0] != faults.RACE:
            return stale
        message = (f"{found[1]}; {self.stale}: memory an earlier trial's buffers left, read "
                   "before its own inputs were written, not a cache")
        self.record.update(status=faults.RACE, error=message)
        return Outcome(faults.RACE, message, record=self.record)

    def _unordered(self) -> tuple[str, str, str] | None:
        """(status, message, details) of the first stream-order trial that fails, or None."""
        ev, case, record = self.evaluator, self.case, self.record
        for index, order in enumerate(ordering.ORDERS):
            # A draw of its own for each: an output left unordered must not read the memory
            # where the last trial's right answer for the same draw still lies.
            seed = ev._input_seed(ev.settings.trials + index)
            reply = ev._ask(record, "run", case, self.budget, input_seed=seed, order=order)
            if isinstance(reply, Fault):
                return reply.status, f"{order} trial: {reply.message}", reply.details
            self.budget = max(self.budget - reply.wall_s, 0.001)
            verdict = ev._judge(case, seed, reply.value, calls=reply.header.get("calls"))
            if verdict is not None:
                return faults.RACE, (f"{ordering.describe(order)} ({order} trial, input seed "
                                     f"{seed}: {verdict.message})"), ""
            if not reply.header.get("streams"):
                return None
        return None

    def _fail(self, status: str, message: str, details: str = "") -> Outcome | None:
        if self.failed:  # a trial run for upstream's verdict only
            return None
        self.failed = True
        self.record.update(correct=False, status=status, error=message)
        return Outcome(status, message, details, record=self.record)


def differs_elementwise(verdict: correctness.Verdict) -> bool:
    """Whether two answers differ beyond the tolerance element by element: two calls of a GPU
    reference whose answer is rounding noise can differ by the whole-tensor rule alone (its
    atomics add in any order)."""
    return not verdict.passed and verdict.rule != correctness.WHOLE_TENSOR


def makes_streams(record: dict) -> bool:
    """Whether the candidate's source makes CUDA streams of its own (its static scan)."""
    return any("creates CUDA streams" in note for note in record.get("static_scan") or [])


def stream_hint(record: dict) -> str:
    """What a cheat verdict most likely means for a candidate that makes CUDA streams."""
    if makes_streams(record):
        return ("; the candidate makes CUDA streams: work on a stream not ordered after the "
                "caller's can read inputs before they are written and return outputs before "
                "they are computed, and events on the caller's stream do not time it")
    return ""


def graph_hint(record: dict) -> str:
    """What a CUDA fault after a first good trial most likely means for a candidate that
    captures CUDA graphs."""
    if any("captures CUDA graphs" in note for note in record.get("static_scan") or []):
        return ("; the candidate captures CUDA graphs: a replay reads and writes the addresses "
                "of the tensors it was captured with, and an earlier trial's inputs are freed "
                "memory by now")
    return ""


def placement(device: str, worker: str | None = None) -> dict:
    """This process's xdist worker, device and, on CUDA, the physical GPU's UUID."""
    where = {"worker": worker, "device": device, "gpu_uuid": None}
    if device.startswith("cuda"):
        import torch

        where["gpu_uuid"] = str(torch.cuda.get_device_properties(device).uuid)
    return where


def input_dtype(inputs: list) -> str:
    """The dtype of the first floating-point input (float32 when there is none)."""
    import torch

    for value in inputs:
        if isinstance(value, torch.Tensor) and value.is_floating_point():
            return str(value.dtype).removeprefix("torch.")
    return "float32"


FLOAT64_READING = "judged against a float64 reference"


def note_float64_reading(record: dict, precision: str, own_error: float) -> None:
    """Flag, once per record and with the largest error of its trials, that an output passed
    only when read against the float64 reference."""
    earlier = [f for f in record.get("flags", []) if f.startswith(FLOAT64_READING)]
    worst = max([own_error, *(float(f.rsplit(" ", 1)[-1].rstrip(")")) for f in earlier)])
    size = (f"the true output is rounding noise, smaller than the {precision} reference's own "
            f"error (error over size {worst:.3g})" if worst >= 1 else
            f"the {precision} reference itself is off (error over size {worst:.3g})")
    record["flags"] = [*(f for f in record.get("flags", []) if f not in earlier),
                       f"{FLOAT64_READING}: {size}"]


USES_PROBLEM_NAMES = "uses_problem_names"
INCONCLUSIVE = "inconclusive"  # a speed item the timing cannot tell from p


def note_outside_names(record: dict, names: list[str]) -> None:
    """Say which globals the candidate took from the problem's namespace, as upstream's shared
    namespace gives them (loading.import_candidate): it passes here as it does there, and
    anyone reading its source sees where those names come from."""
    record["outside_names"] = names
    if names:
        record["flags"] = [*record.get("flags", []), f"{USES_PROBLEM_NAMES}: {', '.join(names)} "
                           "(defined in the problem file, as upstream's shared namespace has them)"]


def charge(record: dict, stage: str, seconds: float, field: str = "harness_s") -> None:
    """Add seconds the harness spent on a stage to the record's harness_s (or field)."""
    spent = dict(record.get(field) or {})
    spent[stage] = round(spent.get(stage, 0.0) + seconds, 6)
    record[field] = spent


def worth_profiling(speedup: float, interval: list[float] | None, p: float,
                    require_kernel: bool) -> bool:
    """Whether to profile a candidate whose call neither a CUDA graph nor a CUPTI trace can
    read (a profiler session costs seconds; the others, milliseconds, so every candidate gets
    them).

    Under --kb-require-kernel the answer decides the verdict of any candidate faster than p;
    otherwise it is a flag, worth a profiler session only when the speedup is above p beyond
    timing noise: a candidate at 1.00x lands above 1 half the time.
    """
    if speedup <= p:
        return False
    return require_kernel or (interval[0] if interval else speedup) > p


def burst_calls(median_s: float) -> int:
    """How many calls make a burst of about BURST_TARGET_S, given a per-call median."""
    return int(min(max(BURST_TARGET_S / max(median_s, 1e-7), 3), BURST_MAX_CALLS))


def base_record(case: Case) -> dict:
    """A new record (record.Record, report.schema.json): every field that is always there."""
    return {
        "level": case.problem.level,
        "problem_id": case.problem.problem_id,
        "problem": case.problem.name,
        "candidate_set": case.set_name,
        "sample": case.sample,
        "candidate_path": str(case.candidate.path) if case.candidate else None,
        "compiled": False,
        "correct": False,
        "speedup": None,
        "baseline_time": None,
        "candidate_time": None,
        "status": None,
        "error": None,
        "extension": None,
        "extension_error": None,
        "upstream": None,  # upstream KernelBench's verdict (see upstream.py), once compiled
        "tf32_by_candidate": None,  # the candidate switched TF32 on (fp32 references keep it off)
    }


def problem_outcome(case: Case, defect: str) -> Outcome:
    """The outcome of a stage of a case whose problem cannot be evaluated."""
    message = f"{case.problem.path}: {defect}"
    record = base_record(case)
    record.update(status=faults.PROBLEM_ERROR, error=message)
    return Outcome(faults.PROBLEM_ERROR, f"the problem, not the candidate: {message}",
                   record=record)


def skipped_after(earlier: Outcome, stage: str) -> Outcome:
    reason = earlier.message if earlier.skipped else f"{stage} failed ({earlier.status})"
    return Outcome(earlier.status, reason, skipped=True, record=dict(earlier.record))
