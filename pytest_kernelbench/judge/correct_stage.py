"""The correctness stage: seeded trials judged against the reference (ours, and upstream's
verdict beside it), the stale-answer check, and the stream-order trials (gpu/ordering.py)."""

from __future__ import annotations

import contextlib

from pytest_kernelbench import faults
from pytest_kernelbench.building import builds
from pytest_kernelbench.gpu import ordering
from pytest_kernelbench.isolation import wire
from pytest_kernelbench.isolation.sandbox import Fault
from pytest_kernelbench.judge import lockstep, upstream
from pytest_kernelbench.judge.compile_stage import remember_build_failure
from pytest_kernelbench.judge.context import StageContext
from pytest_kernelbench.judge.outcome import (
    Outcome,
    failed,
    graph_hint,
    makes_streams,
    skipped_after,
    stream_hint,
)
from pytest_kernelbench.record import Record, add_flag, charged, copy_of, has_flag
from pytest_kernelbench.suite import correctness
from pytest_kernelbench.suite.discovery import Case

# (status, message, details) of a failed stream-order trial
Unordered = tuple[str, str, str]


class Trials:
    """The correctness trials of one case: our verdict, and upstream's beside it.

    run(t) returns None when trial t passes our checks, else the failing Outcome (once the
    record says so). upstream_correct follows upstream's rules over every trial run: False once
    a trial fails them, None when a trial's output cannot be read (a tensor subclass).
    """

    def __init__(self, ctx: StageContext, case: Case, record: Record):
        self.ctx, self.case, self.record = ctx, case, record
        self.upstream_correct: bool | None = True
        self.failed = False
        # what our failing trial returned, when it was the answer for an earlier trial's inputs
        self.stale = ""

    def run(self, trial: int) -> Outcome | None:
        ctx, case, record = self.ctx, self.case, self.record
        seed = ctx.input_seed(trial)
        with phase(record, "reference"):
            ctx.reference.output(case, seed)  # the problem first (a ProblemError is its own)
        with phase(record, "trials"):
            reply = ctx.channel.ask(record, wire.Run(ctx.channel.loading(case), input_seed=seed,
                                                     settle_inputs=ctx.channel.order_trials))
        if record.get("extension") not in (None, "none"):  # it builds: maybe at this call
            recorded = remember_build_failure(ctx, case, reply)
            if recorded and not record.get("extension_error"):  # it failed at this call
                record["extension_error"] = recorded
        if isinstance(reply, Fault):
            self.upstream_correct = False
            hint = graph_hint(record) if reply.status == faults.CUDA_ERROR and trial else ""
            return self._fail(reply.status, f"trial {trial}: {reply.message}{hint}",
                              reply.details)
        if reply.header.get("tf32"):
            record["tf32_by_candidate"] = True  # switched on in forward
        if record.get("extension") in ("failed", "not_loaded") \
                and reply.header.get("extensions"):  # built or loaded at its first call
            state, _ = builds.extension_status(ctx.channel.build_folder(case),
                                               reply.header["extensions"],
                                               ctx.channel.started_s, "")
            record.update({"extension": state, "extension_error": None})
        calls = reply.header.get("calls")
        if ctx.reference.lockstep is not None and not has_flag(record, lockstep.FLAG):
            add_flag(record, lockstep.FLAG)
        with phase(record, "check"):
            self._follow_upstream(upstream.allclose_only(
                ctx.answers.right_answer(case, seed, calls), reply.value,
                ctx.settings.upstream_rules, ctx.settings.precision))
            verdict = ctx.answers.judge(case, seed, reply.value, record, calls)
            if verdict is None and not ctx.settings.allow_input_changes:
                verdict = ctx.answers.judge_inputs(case, seed, reply.extra.get("inputs_after"))
        if verdict is not None and verdict.status == faults.MISMATCH:
            with phase(record, "stale"):
                verdict = self._stale(trial, verdict, reply.value, calls)
        if verdict is None:
            return None
        hint = stream_hint(record) if verdict.status == faults.CHEAT else ""
        return self._fail(verdict.status,
                          f"trial {trial} (input seed {seed}): {verdict.message}{hint}")

    def _follow_upstream(self, theirs: bool | None) -> None:
        if theirs is False or self.upstream_correct is False:
            self.upstream_correct = False
        elif theirs is None:
            self.upstream_correct = None

    def _stale(self, trial: int, verdict: correctness.Verdict, got: object,
               calls: list[int] | None) -> correctness.Verdict:
        """A mismatch that is the right answer for an earlier trial's inputs is a cheat."""
        earlier = self.ctx.answers.stale_answer(self.case, trial, got, calls)
        if earlier is None:
            return verdict
        returned = f"returned the answer for the inputs of trial {earlier}"
        self.stale = self.stale or ("" if self.failed else f"trial {trial} {returned}")
        return correctness.Verdict(faults.CHEAT, f"{returned} (an output cached or "
                                   "replayed across calls)")

    def order_trials(self) -> Outcome | None:
        """After every trial passed: the stream-order trials (ordering.py) on fresh inputs, the
        second only for a candidate that made streams of its own. Ours only: upstream's rules
        know no such trial."""
        with phase(self.record, "order_trials"):
            found = self.unordered()
        return None if found is None else self._fail(*found)

    def race_behind(self, stale: Outcome) -> Outcome:
        """A trial's answer for an earlier trial's inputs, from a candidate that makes streams:
        a cache, or work on an unordered stream that read the memory an earlier trial's
        buffers left there before its own inputs were written (L1/56 of CUDA-L1 read as
        either). Its stream-order trials tell them apart: `race` when one fails, the cache's
        `cheat` when they pass."""
        with phase(self.record, "order_trials"):
            found = self.unordered()
        if found is None or found[0] != faults.RACE:
            return stale
        message = (f"{found[1]}; {self.stale}: memory an earlier trial's buffers left, read "
                   "before its own inputs were written, not a cache")
        return failed(self.record, faults.RACE, message)

    def unordered(self) -> Unordered | None:
        """(status, message, details) of the first stream-order trial that fails, or None."""
        ctx, case, record = self.ctx, self.case, self.record
        for index, order in enumerate(ordering.ORDERS):
            # A draw of its own for each: an output left unordered must not read the memory
            # where the last trial's right answer for the same draw still lies.
            seed = ctx.input_seed(ctx.settings.trials + index)
            reply = ctx.channel.ask(record, wire.Run(ctx.channel.loading(case),
                                                     input_seed=seed, order=order))
            if isinstance(reply, Fault):
                return reply.status, f"{order} trial: {reply.message}", reply.details
            verdict = ctx.answers.judge(case, seed, reply.value,
                                        calls=reply.header.get("calls"))
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
        self.record["correct"] = False
        return failed(self.record, status, message, details)


def phase(record: Record, name: str) -> contextlib.AbstractContextManager[None]:
    """The block's seconds, charged to the record's correct_phases[name]."""
    return charged(record, name, "correct_phases")


def correct_case(ctx: StageContext, case: Case, compiled: Outcome) -> Outcome:
    """The trials (--kb-trials), then the stream-order trials where they run."""
    if not compiled.passed:
        return skipped_after(compiled, "compile")
    record = copy_of(compiled.record)
    trials = Trials(ctx, case, record)
    outcome: Outcome | None = None
    for trial in range(ctx.settings.trials):
        result = trials.run(trial)
        if outcome is None and result is not None:
            outcome = result  # our verdict; the trials go on only for upstream's
        if outcome is not None and trials.upstream_correct is not True:
            break  # upstream's verdict is settled too
    assert record["upstream"] is not None
    record["upstream"] = {**record["upstream"], "correct": trials.upstream_correct}
    order_trials = ctx.channel.order_trials
    if outcome is None and order_trials:
        outcome = trials.order_trials()
    elif outcome is not None and trials.stale and order_trials and makes_streams(record):
        outcome = trials.race_behind(outcome)
    if outcome is not None:
        return outcome
    record.update({"correct": True, "status": faults.PASSED, "error": None})
    return Outcome(faults.PASSED, record=record)


def run_again(ctx: StageContext, case: Case, record: Record) -> None:
    """The correctness stage's calls once more, their outcome unread, for a later stage whose
    worker was started afresh (stopped for an out-of-memory run, or after a failed CUDA graph
    capture): that stage then meets the candidate as the trials left it, not cold (a
    torch.compile'd model that captures CUDA graphs at its first calls, a path chosen at the
    first call). The correctness verdict stays the one given first."""
    correct_case(ctx, case, Outcome(faults.PASSED, record=record))
