"""The answer checks: whether what the candidate returned is right for its inputs (against the
reference, its lockstep twin, or float64), whether it is an earlier draw's answer, and whether
it left its inputs alone."""

from __future__ import annotations

from typing import Any

from pytest_kernelbench import faults, precision
from pytest_kernelbench.isolation import wire
from pytest_kernelbench.judge.reference import ReferenceSide
from pytest_kernelbench.record import Record, replace_flags
from pytest_kernelbench.settings import Settings
from pytest_kernelbench.suite import correctness
from pytest_kernelbench.suite.discovery import Case
from pytest_kernelbench.suite.manifest import Entry

INPUT_SEED_OFFSET = 1_000  # trial t draws inputs with seed + INPUT_SEED_OFFSET + t
TIMING_SEED_OFFSET = 9_000
TIMING_INPUT_SETS = 3  # timed calls rotate through this many input draws
FLOAT64_READING = "judged against a float64 reference"


def input_seed(settings: Settings, trial: int) -> int:
    return settings.seed + INPUT_SEED_OFFSET + trial


def timing_seeds(settings: Settings) -> list[int]:
    return [settings.seed + TIMING_SEED_OFFSET + k for k in range(TIMING_INPUT_SETS)]


def tolerances(settings: Settings, overrides: dict[tuple[int, int], Entry],
               case: Case) -> tuple[float, float]:
    """The run's tolerances (--kb-atol/--kb-rtol, else the --kb-tolerance profile at this
    precision), unless the manifest documents this problem's own (scaled with the profile)."""
    atol, rtol = precision.run_tolerance(settings.tolerance, settings.precision)
    run = (atol if settings.atol is None else settings.atol,
           rtol if settings.rtol is None else settings.rtol)
    entry = overrides.get((case.problem.level, case.problem.problem_id))
    return precision.problem_tolerance(run, entry.atol if entry else None,
                                       entry.rtol if entry else None)


def note_float64_reading(record: Record, precision_name: str, own_error: float) -> None:
    """Flag, once per record and with the largest error of its trials, that an output passed
    only when read against the float64 reference."""
    earlier = [f for f in record.get("flags") or [] if f.startswith(FLOAT64_READING)]
    worst = max([own_error, *(float(f.rsplit(" ", 1)[-1].rstrip(")")) for f in earlier)])
    size = (f"the true output is rounding noise, smaller than the {precision_name} reference's "
            f"own error (error over size {worst:.3g})" if worst >= 1 else
            f"the {precision_name} reference itself is off (error over size {worst:.3g})")
    replace_flags(record, earlier, f"{FLOAT64_READING}: {size}")


class AnswerChecks:
    """Judges outputs and inputs the worker sent back against one problem's reference side."""

    def __init__(self, settings: Settings, reference: ReferenceSide,
                 overrides: dict[tuple[int, int], Entry]):
        self.settings = settings
        self.reference = reference
        self.overrides = overrides

    def tolerances(self, case: Case) -> tuple[float, float]:
        return tolerances(self.settings, self.overrides, case)

    def right_answer(self, case: Case, seed: int, calls: list[int] | None,
                     position: int | None = None) -> Any:
        """The right answer for a call on the draw of seed: the reference's output for that
        draw, or, for a reference that keeps state, its twin's at that call (position,
        default the last) of the candidate's sequence of calls."""
        expected = self.reference.output(case, seed)
        twin = self.reference.lockstep
        if twin is None:
            return expected
        if calls is None:
            raise RuntimeError("a lockstep judgement without the candidate's calls")
        return twin.output_at(calls, position)

    def judge(self, case: Case, seed: int, got: Any, record: Record | None = None,
              calls: list[int] | None = None,
              position: int | None = None) -> correctness.Verdict | None:
        """None when got is right for the inputs of seed (after the candidate's calls, where
        the reference keeps state: right_answer); a Verdict saying what is wrong otherwise. A
        pass that needed the float64 reference is noted in record's flags."""
        odd = wire.subclass_names(got)
        if odd:
            return correctness.Verdict(faults.CHEAT, f"returned a {odd[0]}, not a plain "
                                       "torch.Tensor (subclasses can defer or fake work)")
        atol, rtol = self.tolerances(case)
        expected = self.right_answer(case, seed, calls, position)
        verdict = correctness.compare(expected, got, atol, rtol)
        # At fp32 only the whole-tensor rule is read against float64; at fp16 and bf16 any
        # mismatch is (see precision.py). A stateful reference has no float64 twin.
        lowered = self.settings.precision != "fp32" and verdict.status == faults.MISMATCH
        if self.reference.lockstep is None and (verdict.rule == correctness.WHOLE_TENSOR
                                                or lowered):
            precise = self.reference.precise_output(case, seed)
            own_error = None if precise is None else correctness.within_rounding(
                expected, got, precise, max(atol, rtol))
            if own_error is not None:
                if record is not None:
                    note_float64_reading(record, self.settings.precision, own_error)
                return None
        return None if verdict.passed else verdict

    def stale_answer(self, case: Case, trial: int, got: Any,
                     calls: list[int] | None = None) -> int | None:
        """The earlier trial whose inputs a wrong output is the right answer for, if any (in
        lockstep, the right answer at that trial's call).

        A result cached across calls (keyed on a pointer, a shape or a call count) shows up here
        or in the timed calls, depending on where the allocator puts each draw.
        """
        if self.reference.lockstep is not None and calls:
            seeds = [input_seed(self.settings, earlier) for earlier in range(trial)]
            for position, seed in enumerate(calls[:-1], start=1):
                if seed in seeds and self.judge(case, seed, got, calls=calls,
                                                position=position) is None:
                    return seeds.index(seed)
            return None
        for earlier in range(trial):
            if self.judge(case, input_seed(self.settings, earlier), got) is None:
                return earlier
        return None

    def judge_inputs(self, case: Case, seed: int, after: Any) -> correctness.Verdict | None:
        """A candidate must leave its inputs as it found them (unless the reference does not)."""
        import torch

        if after is None or self.reference.mutates_inputs:
            return None
        pristine = [x for x in self.reference.inputs(seed) if isinstance(x, torch.Tensor)]
        for index, (before, now) in enumerate(zip(pristine, after)):
            if not isinstance(now, torch.Tensor) or now.shape != before.shape \
                    or not torch.equal(now.to(before.device), before):
                return correctness.Verdict(faults.MUTATED_INPUT,
                                           f"input {index} was modified in place by forward")
        return None
