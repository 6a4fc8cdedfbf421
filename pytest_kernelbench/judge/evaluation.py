"""The stages of a case -- compile, correct, speed (then attribute and, under --kb-profile,
ncu) -- as the pytest process runs them, each under the device lock.

Candidate code only ever runs in the sandbox worker. This side imports the (trusted) problem,
computes reference outputs from its own inputs (reference.py), and judges what the worker sends
back (answers.py). Each stage is a module of its own with its inputs in its signature; the
Evaluator only orchestrates: it memoises each stage's Outcome per case, so a later stage reuses
an earlier verdict and a stage run alone (e.g. `-m kb_speed`, or on another xdist worker)
first runs the stages it needs, and it holds the device for each.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pytest_kernelbench import faults
from pytest_kernelbench.building import cores
from pytest_kernelbench.building.builds import cuda_arch
from pytest_kernelbench.gpu import devices, memory, roofline
from pytest_kernelbench.gpu.devices import device_lock, driver_version, use_device
from pytest_kernelbench.isolation.sandbox import Sandbox
from pytest_kernelbench.judge import answers, attribute_stage, profile_stage, speed_stage
from pytest_kernelbench.judge.answers import AnswerChecks
from pytest_kernelbench.judge.channel import WorkerChannel
from pytest_kernelbench.judge.compile_stage import (
    BuildFacts,
    compile_case,
    waits_for_a_build,
)
from pytest_kernelbench.judge.context import StageContext
from pytest_kernelbench.judge.correct_stage import correct_case, run_again
from pytest_kernelbench.judge.outcome import (
    Outcome,
    ProblemError,
    base_record,
    failed,
    problem_outcome,
    settled,
)
from pytest_kernelbench.judge.reference import ReferenceSide
from pytest_kernelbench.judge.speed_stage import BaselineCache, Timed
from pytest_kernelbench.record import Record, add_flag, charge, mark_held, note_aside
from pytest_kernelbench.settings import Settings
from pytest_kernelbench.suite import loading
from pytest_kernelbench.suite.discovery import Case
from pytest_kernelbench.suite.integrity import ProblemDigests
from pytest_kernelbench.suite.manifest import Entry

Stage = Callable[[Case], Outcome]
# Stages that meet a fresh worker as they would anyway: it loads the candidate, or runs it first.
FIRST_STAGES = ("compile", "correct")


class Evaluator:
    """One process's judge: the stages of every case it is asked for, on one device."""

    def __init__(self, settings: Settings, device: str,
                 overrides: dict[tuple[int, int], Entry] | None = None,
                 problem_digests: ProblemDigests | None = None, started_s: float = 0.0,
                 broken: dict[Path, str] | None = None, worker: str | None = None,
                 node: dict[str, str] | None = None):
        loading.use_huge_pages()  # here and in the sandbox workers, started below
        loading.apply(settings.numerics)  # this process's switches, once
        use_device(device)
        self.settings = settings
        self.device = device
        self.overrides: dict[tuple[int, int], Entry] = overrides or {}
        self.problem_digests = problem_digests
        # Problem file -> why it cannot be evaluated (checked at collection, or found on use).
        self.broken: dict[Path, str] = dict(broken or {})
        # Returns once the run's build pool is done with a build folder (set by the plugin).
        self.wait_for_build: Callable[[Path], None] = lambda folder: None
        self.build_entry: Callable[[Path], dict[str, Any] | None] = lambda folder: None
        self.timing_batch = 1  # timings of the device that gather before it drains
        self.arch = cuda_arch(device)
        self.placement = placement(device, worker, node)
        self.reference = ReferenceSide(settings, device, functools.partial(
            answers.tolerances, settings, self.overrides))
        env = {"TRITON_INTERPRET": "1"} if device == "cpu" else {}
        # --kb-build-cores=split: this process and its workers keep off the timings' cores but
        # while they time (_on_timing_cores); the split is made before this thread moves.
        self.split = cores.split_for(settings.build_cores, device)
        # the thread's cores before, given back at close (Session.evaluate judges in its
        # caller's thread)
        self._cores_before = cores.thread_cores()
        if self.split is not None:
            cores.pin_thread(self.split.shared)
        self._timing_cores: frozenset[int] | None = None  # while this process times
        # Candidate code may not read other candidates or the builds made from them.
        self.sandbox = Sandbox(env, device, settings.confine,
                               (*settings.candidate_dirs, settings.build_cache_root),
                               stops_for_timings=settings.drain == "stop")
        if self.split is not None:
            self.sandbox.shared_cores = self.split.shared
        self.channel = WorkerChannel(self.sandbox, settings, device, self.arch,
                                     lambda: self.reference.lockstep is not None,
                                     started_s or time.time())
        self.context = StageContext(settings, device, self.reference,
                                    AnswerChecks(settings, self.reference, self.overrides),
                                    self.channel)
        self._last_case: str | None = None  # named when a problem file changes under us
        self._worker_case: Case | None = None  # whose candidate the worker holds, paused
        self._worker_stopped_for: Case | None = None  # stopped for a claim, until its next stage
        self._done: dict[tuple[Case, str], Outcome] = {}
        self._build_waits: dict[Case, float] = {}  # seconds a compile item waited for its build
        self._timed: dict[Case, Timed] = {}  # timed cases awaiting attribution and verdict
        self._ceilings: dict[str, roofline.Ceilings] = {}
        # Among the judging processes of the device, each gives its memory back to a case that
        # ran out of it beside them (gpu/memory.py); a thread serves claims while no stage runs
        # (between_stages is free).
        self._between_stages = threading.RLock()
        self.membership = memory.Membership(device, self._give_memory_back,
                                            self._between_stages)
        self._baseline_cache = BaselineCache(set(), sorted({*settings.summary_ps,
                                                            settings.flag_speedup}),
                                             self._device_facts())

    def close(self) -> None:
        self.membership.close()  # first: its thread may be giving memory back through the sandbox
        self.sandbox.close()
        if self.split is not None:
            cores.pin_thread(self._cores_before)

    def forget(self, case: Case) -> None:
        """Drop what is kept of a settled case (its stages' outcomes), so that a process that
        judges attempt after attempt holds no more for the five hundredth than for the first."""
        for stage in ("compile", "correct", "speed", "attribute", "ncu"):
            self._done.pop((case, stage), None)
        self._build_waits.pop(case, None)
        self._timed.pop(case, None)

    def tolerances(self, case: Case) -> tuple[float, float]:
        return answers.tolerances(self.settings, self.overrides, case)

    # --- stages ---------------------------------------------------------------------------

    # Each item's outcome is settled (outcome.settled): its record says what the item said,
    # and the speed item's says whether the case counts as fast at each p the summary shows.

    def compile(self, case: Case) -> Outcome:
        if (case, "compile") not in self._done:
            self._await_build(case)
        return settled(self._memo(case, "compile", self._compile, exclusive=False), "compile")

    def correct(self, case: Case) -> Outcome:
        return settled(self._memo(case, "correct", lambda c: correct_case(self.context, c,
                                                                          self.compile(c)),
                                  exclusive=False), "correct")

    def speed(self, case: Case) -> Outcome:
        return settled(self._speed_item(case), "speed", self.settings.summary_ps)

    def _speed_item(self, case: Case) -> Outcome:
        checked = self.correct(case)  # under the shared lock, before timing takes it alone
        # A candidate that failed is not timed (unless asked, where upstream's rules pass it,
        # for their speedup): its skip need not wait for the device to itself.
        times = checked.passed or speed_stage.times_for_upstream(self.settings, checked.record)
        timed = self._memo(case, "speed", self._speed, exclusive=times)
        if case not in self._timed and (case, "attribute") not in self._done:
            return timed  # not timed, or judged while it was timed (a cheat)
        # What follows the timing needs the device, but not alone: other work may share it.
        judged = self._memo(case, "attribute", self._attribute, exclusive=False)
        self._timed.pop(case, None)  # kept until then: a stage short of memory runs again
        if not profile_stage.profiles(self.context):
            return judged
        # Nsight Compute replays each kernel and locks the clocks: alone on the device again.
        return self._memo(case, "ncu", lambda c: profile_stage.profile_case(
            self.context, c, judged), exclusive=True)

    def _compile(self, case: Case) -> Outcome:
        facts = BuildFacts(self.channel.started_s, self._build_waits.pop(case, None),
                           self.build_entry)
        return compile_case(self.context, case, facts)

    def _speed(self, case: Case) -> Outcome:
        outcome, timed = speed_stage.speed_case(self.context, case, self.correct(case),
                                                self._baseline_cache)
        if timed is not None:
            self._timed[case] = timed  # speed() goes on to the attribute stage
        return outcome

    def _attribute(self, case: Case) -> Outcome:
        return attribute_stage.attribute_case(self.context, case,
                                              self._done[(case, "speed")].record,
                                              self._timed[case], self._ceilings)

    # --- orchestration ----------------------------------------------------------------------

    def _memo(self, case: Case, stage: str, run: Stage, exclusive: bool) -> Outcome:
        key = (case, stage)
        if key not in self._done:
            if self.problem_digests is not None:  # raises ProblemChanged
                self.problem_digests.check(case.problem.path, self._last_case)
            self._last_case = f"{case.problem.key}[{case.id}]"
            outer = devices.holding_a_device()
            try:
                outcome = self._held(case, stage, run, exclusive, admit=not outer)
                admitted = False
            except NoRoom as short:
                outcome = self._alone_for_room(case, stage, run, short)
                admitted = True  # it held the device alone, beside the others' paused workers
            if outcome.status == faults.OUT_OF_MEMORY and not outer:
                outcome = self._alone_after_oom(case, stage, run, outcome,
                                                exclusive or admitted, admitted)
            self._done[key] = outcome
        return self._done[key]

    def _alone_for_room(self, case: Case, stage: str, run: Stage, short: NoRoom) -> Outcome:
        """A stage that its problem's footprint says would not fit the memory left beside the
        other processes of the run waits for them to give theirs back (memory.claim_memory),
        as one that ran out of memory would, without running out first. Its own worker stays
        loaded: nothing ran out in it, and started afresh its candidate would meet the stage
        cold (the timing that follows the correctness trials of a large problem, say)."""
        asked = time.monotonic()
        with memory.claim_memory(self.device, self._give_memory_back) as room:
            outcome = self._held(case, stage, run, exclusive=True, claim=room, asked=asked)
        add_flag(outcome.record, "waited for the device's memory: its problem's reference side "
                 f"held {short.reference_bytes / 2**30:.2f} GiB before, and "
                 f"{short.free_bytes / 2**30:.2f} GiB were free beside the run's other "
                 "processes (judged with the device to itself)")
        return outcome

    def _alone_after_oom(self, case: Case, stage: str, run: Stage, beside: Outcome,
                         was_exclusive: bool, admitted: bool) -> Outcome:
        """A stage that ran out of memory while other work shared the device's memory (a
        timing holds the device alone, but not its memory; a stage that claimed the memory
        still ran beside the others' paused workers) runs once more with the device to itself,
        in a fresh worker, once every other process of the run on the device gave its memory
        back and stopped its worker (memory.claim_memory): a verdict must not depend on what
        ran beside the candidate."""
        asked = time.monotonic()
        with memory.claim_memory(self.device, self._give_memory_back, workers=True) as room:
            outcome = self._held(case, stage, run, exclusive=True, claim=room, asked=asked)
        first = (beside.record.get("held") or {}).get(stage)
        # a shared first hold, like any other, for the check that no timing overlapped it
        if first and not was_exclusive:
            name = f"{stage}_beside_others"
            mark_held(outcome.record, name, first)
            spans = (beside.record.get("aside") or {}).get(stage)
            if spans:
                note_aside(outcome.record, name, spans)
        where = "with the device to itself beside the other processes' paused workers" \
            if admitted else "while sharing the device"
        add_flag(outcome.record, f"ran out of device memory {where}; judged again with the "
                 "device to itself and every other worker of the run stopped (the first run "
                 f"said: {beside.message})")
        return outcome

    def _held(self, case: Case, stage: str, run: Stage, exclusive: bool,
              claim: Callable[[], memory.Room] | None = None, admit: bool = False,
              asked: float | None = None) -> Outcome:
        """Run one stage under the device lock and note in its record how it held it. A
        process asks for the device only once no other's claim to its memory stands (claim:
        this stage's own, which says what it got once the device is held; asked: when that
        claim began, so that the wait counts the others giving their memory back)."""
        with self._between_stages:
            return self._held_between(case, stage, run, exclusive, claim, admit,
                                      time.monotonic() if asked is None else asked)

    def _held_between(self, case: Case, stage: str, run: Stage, exclusive: bool,
                      claim: Callable[[], memory.Room] | None, admit: bool,
                      asked: float) -> Outcome:
        if claim is None and not devices.holding_a_device():
            memory.serve_claims(self.device, self._give_memory_back)
        with device_lock(self.device, exclusive, self.timing_batch,
                         idle_first=self.settings.drain == "stop") as hold:
            held_from = time.time()
            lock_wait_s = time.monotonic() - asked
            room = claim() if claim is not None else None
            waited_s = time.monotonic() - asked  # for the lock and, claimed, the others' memory
            if room is None:
                room = memory.Room(0, 0, *memory.free_and_total(self.device))
            worker_stopped = self._worker_stopped_for == case
            self._worker_stopped_for = None
            footprint = footprint_key(case, stage, self.settings.precision)
            known = expected_footprint(self.device, case, stage, self.settings.precision) \
                if admit else None
            if not memory.fits_beside(known, room.free_bytes):
                assert known is not None and room.free_bytes is not None
                raise NoRoom(known, room.free_bytes)  # gives the device up: it claims instead
            self.sandbox.oom_peak_bytes = None
            loading.reset_peak_device_bytes()
            outer_hold, self.sandbox.hold = self.sandbox.hold, hold
            # --kb-timeout bounds the stage: its requests share what is left of it (a stage
            # that runs an earlier one first gets its own time back afterwards).
            try:
                with self.channel.deadline.running(self.settings.timeout_s), \
                        self._on_timing_cores(exclusive):
                    outcome = self._run_stage(
                        case, stage, self._as_trials_left_it(stage, run) if worker_stopped
                        else run, alone=room.workers_stopped)
            finally:
                self.sandbox.hold = outer_hold
                self._let_go_of_memory()
                self.sandbox.pause()  # still under the lock: nothing of it runs past the stage
            held_to = time.time()
            reference_bytes = loading.peak_device_bytes()  # None without CUDA
            if reference_bytes:
                memory.note_footprint(self.device, footprint, reference_bytes)
        self._worker_case = case if self.sandbox.child_pid is not None else None
        if worker_stopped and claim is None:
            add_flag(outcome.record, "its worker was stopped between stages for another case "
                     "that ran out of device memory, and started afresh for this stage" + (
                         "" if stage in FIRST_STAGES else "; it ran its correctness trials "
                         "again before this stage, their outcome unread"))
        if outcome.status == faults.OUT_OF_MEMORY or claim is not None:  # what it had, either way
            note_memory(outcome.record, room, claim is not None, self.sandbox.oom_peak_bytes,
                        loading.peak_device_bytes(), waited_s)
        self._note_hold(outcome, stage, [round(held_from, 6), round(held_to, 6)], lock_wait_s,
                        hold)
        return outcome

    @contextlib.contextmanager
    def _on_timing_cores(self, exclusive: bool) -> Iterator[None]:
        """With --kb-build-cores=split, a timing's two threads on the host (this one, and its
        worker's, which launches the timed calls) move onto its GPU's reserved cores while it
        holds the device, and back onto the shared ones after."""
        if self.split is None or not exclusive or self._timing_cores is not None:
            yield
            return
        self._timing_cores = self.split.for_timing(devices.cuda_index(self.device))
        cores.pin_thread(self._timing_cores)
        self.sandbox.pin_worker(self._timing_cores)
        try:
            yield
        finally:
            self._timing_cores = None
            cores.pin_thread(self.split.shared)
            self.sandbox.pin_worker(self.split.shared)

    def _as_trials_left_it(self, stage: str, run: Stage) -> Stage:
        """The stage, for a case whose worker was stopped since its last stage (every worker
        stops for the last run before an `out_of_memory` verdict, its own or a neighbour's): a
        stage after the correctness trials first runs them again in the fresh worker, so that
        it meets the candidate as they left it, not cold (a torch.compile'd model that captures
        CUDA graphs at its first calls, a path chosen at the first call). Their outcome is not
        read: the correctness verdict was given where nothing ran out (correct_stage.run_again)."""
        if stage in FIRST_STAGES:
            return run

        def after_trials(case: Case) -> Outcome:
            run_again(self.context, case, self.compile(case).record)
            return run(case)
        return after_trials

    def _run_stage(self, case: Case, stage: str, run: Stage, alone: bool) -> Outcome:
        """The stage's Outcome; a broken problem's for its compile stage (the later stages are
        then skipped after it, so it is said once per case). A problem that ran out of memory
        beside others is not broken: the stage is judged again once they gave theirs back
        (out_of_memory here), and only a problem short of memory then is. So is the harness's
        own work in the stage (comparing the candidate's output, say): short of memory beside
        others it is judged again alone; short alone, it fails as the harness's, not as the
        candidate's."""
        defect = self.broken.get(case.problem.path) if stage == "compile" else None
        try:
            return problem_outcome(case, defect) if defect else run(case)
        except ProblemError as exc:
            if exc.out_of_memory and not alone:
                return failed(base_record(case), faults.OUT_OF_MEMORY,
                              f"the problem's own side ran out of memory: {exc}")
            self.broken[case.problem.path] = str(exc)
            return problem_outcome(case, str(exc))
        except Exception as exc:
            if alone or faults.classify_exception(exc, stage) != faults.OUT_OF_MEMORY:
                raise
            return failed(base_record(case), faults.OUT_OF_MEMORY, "the harness's own side "
                          f"ran out of memory: {faults.describe_exception(exc)}")

    def _note_hold(self, outcome: Outcome, stage: str, span: list[float], lock_wait_s: float,
                   hold: devices.DeviceHold) -> None:
        """Where the stage ran and when it held the device: a multi-GPU run's report shows
        which GPU each worker used and that no timing overlapped other work on it."""
        record: Record = outcome.record
        record["placement"] = {**self.placement, "worker_gpu_uuid": self.sandbox.worker_gpu}
        ran = bool(record.get("harness_s"))  # the candidate ran, in this worker
        if ran:
            record["confinement"] = self.sandbox.confinement
        if outcome.details and not outcome.passed and not outcome.skipped:
            # Where it failed (the candidate's frames, the compiler's lines), for feedback.
            record["error_details"] = outcome.details[-4000:]
        mark_held(record, stage, span)
        if ran:  # charged to cases whose candidate ran
            charge(record, "lock_wait", lock_wait_s)
        if hold.aside:  # spans it let others use the device while a compiler ran
            note_aside(record, stage, hold.aside)
        if hold.busy:
            add_flag(record, f"the GPU was still busy {devices.IDLE_TIMEOUT_S:g} s after the "
                     "work sharing it was stopped: something outside this run's control ran "
                     "beside this stage")

    def _give_memory_back(self, workers: bool) -> None:
        """What this process holds on the device that is had again unchanged, for a case's
        claim: the reference's outputs and the copies of its model, its cached blocks. Its
        worker gave its own cached blocks back when its last stage ended (_let_go_of_memory)
        and stays paused: started afresh, a candidate meets its next stage cold (a
        torch.compile'd model captured anew, a path chosen at its first call). Only the last
        run before an `out_of_memory` verdict (workers) has it stopped too: its case's next
        stage runs the correctness trials again first (_as_trials_left_it), and says so."""
        if workers and self.sandbox.child_pid is not None:
            self._worker_stopped_for = self._worker_case
            self.sandbox.stop_child()
        self.reference.give_back()
        loading.release_cached_memory()

    def _let_go_of_memory(self) -> None:
        """What a stage leaves behind is given back before the next lock is asked for: the
        workers of a run share the device's memory, and one waiting for the device must not
        hold what the stage that runs meanwhile needs (large reference outputs; the worker's
        timing draws)."""
        self.reference.let_go_of_outputs()
        self.sandbox.release()
        loading.release_cached_memory()

    def _await_build(self, case: Case) -> None:
        """Wait until the run's build pool is done with the candidate's build folder. This
        happens before the device lock is taken: a build can take a minute, and a timing
        waiting for the device (and all work queued behind it) would wait as long."""
        if case.candidate is None:
            return
        if not waits_for_a_build(case.candidate.path.read_text(errors="replace"), self.device):
            return
        started = time.monotonic()
        self.wait_for_build(self.channel.build_folder(case))
        self._build_waits[case] = time.monotonic() - started

    def _device_facts(self) -> dict[str, Any]:
        """The GPU and driver that name a cached baseline (--kb-baseline-cache, CUDA only)."""
        if self.settings.baseline_cache is None or not self.device.startswith("cuda"):
            return {}
        import torch

        return {"gpu": torch.cuda.get_device_name(self.device), "driver": driver_version()}


class NoRoom(Exception):
    """A stage its problem's footprint says would not fit the free memory beside the run's
    other processes (memory.fits_beside)."""

    def __init__(self, reference_bytes: int, free_bytes: int):
        super().__init__(reference_bytes, free_bytes)
        self.reference_bytes, self.free_bytes = reference_bytes, free_bytes


# A stage not yet measured for its problem expects what an earlier one held: the timing and the
# attribution call the reference on inputs like the correctness trials' (the trials hold more).
EARLIER_STAGES = {"speed": ("correct",), "attribute": ("speed", "correct"), "ncu": ("correct",)}


def expected_footprint(device: str, case: Case, stage: str, precision: str) -> int | None:
    """What the problem's reference side is known to hold in this stage, or else in the
    nearest earlier stage measured (None: not measured yet, the stage is tried)."""
    for name in (stage, *EARLIER_STAGES.get(stage, ())):
        known = memory.footprint(device, footprint_key(case, name, precision))
        if known is not None:
            return known
    return None


def footprint_key(case: Case, stage: str, precision: str) -> str:
    """The name of a problem's footprint in a stage at a precision, alike in every process of
    the run and of later runs on the host: by the problem's text (the Python API writes it to a
    file of its own for each attempt), and the precision its tensors are made in."""
    path = case.problem.path
    try:
        seen = path.stat()
    except OSError:
        return f"{hashlib.sha256(str(path).encode()).hexdigest()[:24]}-{precision}-{stage}"
    return f"{_digest(path, seen.st_mtime_ns, seen.st_size)}-{precision}-{stage}"


@functools.lru_cache(maxsize=1024)
def _digest(path: Path, mtime_ns: int, size: int) -> str:
    """A problem file's digest, read once per version of the file (each stage asks for it)."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()[:24]
    except OSError:
        return hashlib.sha256(str(path).encode()).hexdigest()[:24]


def note_memory(record: Record, room: memory.Room, claimed: bool, worker_peak_bytes: int | None,
                judge_peak_bytes: int | None, waited_s: float) -> None:
    """What an out_of_memory verdict ran with: the device's total and free bytes when the stage
    took it, whether every other process of the run had given its memory back first (claimed),
    the most the candidate's worker and this process's reference side held, and how long the
    stage waited for the device (and, claimed, for the others' memory): what running it alone
    cost. A later stage that only waited for room keeps the note of the run that had every
    other worker stopped: that run is what the field speaks for."""
    earlier = record.get("memory") or {}
    if earlier.get("others_workers_stopped") and not room.workers_stopped:
        return
    record["memory"] = {**room.as_dict(), "others_gave_back_first": claimed,
                        "worker_peak_bytes": worker_peak_bytes,
                        "judge_peak_bytes": judge_peak_bytes, "waited_s": round(waited_s, 3)}


def placement(device: str, worker: str | None = None,
              node: dict[str, str] | None = None) -> dict[str, str | None]:
    """This process's xdist worker, device and, on CUDA, the physical GPU's UUID; on a cluster,
    the node it runs on (`node`, `node_id`)."""
    where: dict[str, str | None] = {"worker": worker, "device": device, "gpu_uuid": None,
                                    **(node or {})}
    if device.startswith("cuda"):
        import torch

        where["gpu_uuid"] = str(torch.cuda.get_device_properties(device).uuid)
    return where

