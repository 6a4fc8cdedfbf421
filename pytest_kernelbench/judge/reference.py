"""The reference side of one problem, in the pytest process: the loaded problem, its reference
model and outputs (float64 too), what it is (stateful, stochastic, mutating its inputs), and
what this process measures of its baseline once per problem."""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_kernelbench import nested
from pytest_kernelbench.gpu import roofline, timing
from pytest_kernelbench.gpu.kernels import launched_kernels
from pytest_kernelbench.judge import lockstep
from pytest_kernelbench.judge.lockstep import Lockstep
from pytest_kernelbench.judge.outcome import ProblemError, problem_failed
from pytest_kernelbench.settings import Settings
from pytest_kernelbench.suite import correctness, loading
from pytest_kernelbench.suite.discovery import Case

BURST_TARGET_S = 0.05  # the harness's own clock times about this long a burst of calls
BURST_MAX_CALLS = 2_000
# Reference outputs are kept from one stage to the next up to this size in all; on a CPU a
# reference model larger than this is let go while the worker times (set_aside).
KEPT_OUTPUTS_BYTES = 256 * 2**20


def burst_calls(median_s: float) -> int:
    """How many calls make a burst of about BURST_TARGET_S, given a per-call median."""
    return int(min(max(BURST_TARGET_S / max(median_s, 1e-7), 3), BURST_MAX_CALLS))


def differs_elementwise(verdict: correctness.Verdict) -> bool:
    """Whether two answers differ beyond the tolerance element by element: two calls of a GPU
    reference whose answer is rounding noise can differ by the whole-tensor rule alone (its
    atomics add in any order)."""
    return not verdict.passed and verdict.rule != correctness.WHOLE_TENSOR


def input_dtype(inputs: list[Any]) -> str:
    """The dtype of the first floating-point input (float32 when there is none)."""
    import torch

    for value in inputs:
        if isinstance(value, torch.Tensor) and value.is_floating_point():
            return str(value.dtype).removeprefix("torch.")
    return "float32"


class ReferenceSide:
    """One problem's reference at a time: loaded on first use, replaced when a case of another
    problem asks. Every answer raises ProblemError when the problem itself fails."""

    def __init__(self, settings: Settings, device: str,
                 tolerances: Callable[[Case], tuple[float, float]]):
        self.settings = settings
        self.device = device
        self.tolerances = tolerances
        self.path: Path | None = None
        self.problem: Any = None
        self._model: Any = None
        self._expected: dict[int, Any] = {}
        self._checked = False  # for state kept and overflow, at its first output
        self.mutates_inputs = False
        self._unjudgeable = ""  # why it cannot be judged against (state kept, overflow)
        self.stochastic = False  # whether it draws random numbers in forward
        # for a reference that keeps state between calls: its twin, called as the candidate was
        self.lockstep: Lockstep | None = None
        self._facts: dict[str, Any] = {}  # measured and read here, once per problem

    @property
    def holds_model(self) -> bool:
        """Whether the reference model is in memory (not set aside)."""
        return self._model is not None

    def inputs(self, seed: int) -> list[Any]:
        return loading.make_inputs(self.problem, seed, self.device, self.settings.numerics)

    def output(self, case: Case, seed: int) -> Any:
        """Reference output for an input draw, computed here and kept while the problem stays."""
        import torch

        if self.path != case.problem.path:
            self._load(case)
        if seed not in self._expected:
            first = not self._checked
            self._checked = True
            try:
                reference = self.model()  # built before the draw seeds the RNG
                inputs = self.inputs(seed)
                pristine = loading.clone_inputs(inputs)
                with torch.no_grad():
                    self._expected[seed] = reference(*inputs)
                    if first:
                        self._unjudgeable = self._state_kept(case, self._expected[seed], seed) \
                            or self._overflows(self._expected[seed])
            except Exception as exc:
                failure = problem_failed("its inputs or reference failed", exc)
                # a draw short of memory is drawn again: its first-call checks then run
                self._checked = self._checked and not (first and failure.out_of_memory)
                raise failure from exc
            self.mutates_inputs |= any(
                isinstance(a, torch.Tensor) and not torch.equal(a, b)
                for a, b in zip(inputs, pristine))
        if self._unjudgeable:
            raise ProblemError(self._unjudgeable)
        return self._expected[seed]

    def _load(self, case: Case) -> None:
        self.path = None  # set once the problem has loaded
        try:
            self.problem = loading.import_file(case.problem.path, "kb_problem")
            self._model = None
            self.model()
        except Exception as exc:
            raise problem_failed("its reference cannot be built", exc) from exc
        self.path = case.problem.path
        self._expected = {}
        self._checked = False
        self.mutates_inputs = False
        self._facts = {}
        self._unjudgeable = ""
        self.stochastic = False
        self.lockstep = None

    def model(self) -> Any:
        """The loaded problem's reference model, built again (the same seed, so the same
        weights) when it was set aside (set_aside)."""
        if self._model is None:
            self._model = self.fresh_model()
        return self._model

    def fresh_model(self) -> Any:
        """A new reference model, as the candidate's is built: same seed, same weights."""
        init_args = loading.make_init_args(self.problem, self.settings.seed, self.device)
        return loading.build_model(self.problem.Model, init_args, self.settings.seed,
                                   self.device, self.settings.mode, self.settings.numerics)

    def baseline_model(self) -> Any:
        if "baseline_model" not in self._facts:
            self._facts["baseline_model"] = loading.as_baseline(self.model(),
                                                                self.settings.baseline)
        return self._facts["baseline_model"]

    def precise_output(self, case: Case, seed: int) -> Any:
        """The reference's output for seed computed in float64 (a copy of the reference model
        and its floating inputs cast), or None where the reference cannot run in float64."""
        import torch

        self.output(case, seed)  # loads the problem (and resets its facts)
        cache = self._facts.setdefault("precise", {})
        if seed not in cache:
            try:
                if "model64" not in self._facts:
                    self._facts["model64"] = copy.deepcopy(self.model()).double()
                inputs = [x.double() if isinstance(x, torch.Tensor) and x.is_floating_point()
                          else x for x in self.inputs(seed)]
                with torch.no_grad():
                    cache[seed] = self._facts["model64"](*inputs)
            except Exception:  # an op without a float64 kernel: the fp32 rule stands
                cache[seed] = None
        return cache[seed]

    def wall_s(self, case: Case, seeds: list[int]) -> float:
        """What this process measures of the baseline once per problem, with no candidate code
        running and the device held alone: its wall time per call."""
        self.output(case, seeds[0])  # loads the problem and its reference model
        if "wall_s" not in self._facts:
            self._facts["wall_s"] = self.baseline_wall_s([self.inputs(s) for s in seeds])
        return float(self._facts["wall_s"])

    def issue_s(self) -> float:
        """What the baseline's last burst here (wall_s, baseline_wall_s) spent per call issuing
        its work, before the device finished it: the part of a call a slower process slows."""
        return float(self._facts["issue_s"])

    def baseline_wall_s(self, sets: list[list[Any]]) -> float:
        """The baseline's time per call on this process's own clock, over a burst of calls."""
        baseline = self.baseline_model()
        self._burst(baseline, sets, 1)  # warm (and compile, if asked)
        probe_s, issued_s = self._burst(baseline, sets, 3)
        calls = 3
        if probe_s < BURST_TARGET_S:  # else already a burst of the length asked for
            calls = burst_calls(probe_s / 3)
            probe_s, issued_s = self._burst(baseline, sets, calls)
        self._facts["issue_s"] = issued_s / calls
        return probe_s / calls

    def _burst(self, model: Any, sets: list[list[Any]], calls: int) -> tuple[float, float]:
        """A burst's seconds in all and issuing its calls (on a CPU, the same: each call
        finishes before it returns)."""
        started = time.perf_counter()
        timing.run_burst(model, sets, calls, self.device, sync=False)
        issued_s = time.perf_counter() - started
        timing.sync_device(self.device)
        wall_s = time.perf_counter() - started
        return wall_s, (wall_s if self.device == "cpu" else issued_s)

    def traits(self, case: Case, seeds: list[int],
               between: Callable[[], None] = lambda: None) -> dict[str, Any]:
        """What the verdict reads of the problem, once: the kernels its eager reference
        launches (CUDA only), its cost and its dtype. Nothing in it is timed, so it is read
        under the shared hold of the attribute stage, not while a timing holds the device
        alone (or before a large reference is let go, set_aside). On a large model each piece
        takes seconds: between() lets waiting timings run between them."""
        self.output(case, seeds[0])  # loads the problem and its reference model
        if "cost" not in self._facts:
            try:
                first, last = (self.inputs(seed) for seed in (seeds[0], seeds[-1]))
                kernels = None
                if self.device.startswith("cuda"):
                    between()
                    kernels = launched_kernels(self.model(), first, last, self.device)[0]
                    between()
                cost = roofline.problem_cost(self.model(), first)
            except Exception as exc:
                raise problem_failed("its reference failed while its kernels and cost were "
                                     "read", exc) from exc
            self._facts.update({"kernels": kernels, "cost": cost, "dtype": input_dtype(first)})
        return self._facts

    def set_aside(self, case: Case, seeds: list[int]) -> None:
        """On a CPU, a reference model of more than KEPT_OUTPUTS_BYTES is let go while the
        worker times: the worker then holds two such models (the candidate and its baseline),
        and a third here put L2/68's 1 GiB of weights in memory three times over. Its outputs
        for the timing draws, which the timed outputs are checked against, are computed first;
        anything else that needs it builds it again."""
        if self.device != "cpu" or self.settings.baseline != "eager" or self._model is None \
                or nested.nbytes(list(self._model.state_dict().values())) \
                <= KEPT_OUTPUTS_BYTES:
            return
        for seed in seeds:
            self.output(case, seed)
        self.traits(case, seeds)
        self._model = None
        self._facts.pop("baseline_model", None)
        self._facts.pop("model64", None)

    def let_go_of_outputs(self, kept_bytes: int | None = None) -> None:
        """Outputs over kept_bytes (default KEPT_OUTPUTS_BYTES) are computed again when asked
        for (of the compile stage's draw, the only one a later stage asks for again, that costs
        one reference call)."""
        kept_bytes = KEPT_OUTPUTS_BYTES if kept_bytes is None else kept_bytes
        if nested.nbytes(self._expected) > kept_bytes:
            self._expected = {}
        if nested.nbytes(self._facts.get("precise")) > kept_bytes:
            self._facts.pop("precise", None)

    def give_back(self) -> None:
        """Drop what is built again when asked for (every output, the float64 and baseline
        copies of the model): another case needs the device's memory (gpu/memory.py). The
        model itself stays: a reference that keeps state between calls must not restart."""
        self.let_go_of_outputs(kept_bytes=-1)
        self._facts.pop("baseline_model", None)
        self._facts.pop("model64", None)

    def _overflows(self, output: Any) -> str:
        """Why the reference cannot be judged against at a low precision, when its output holds
        NaN or Inf there: inputs or activations beyond the dtype's range (level 3's
        DeepNarrowMLP draws inputs up to 5e5, past fp16's 65504) leave nothing to compare, and
        a NaN answer passes against a NaN reference. "" at fp32, or for a finite output."""
        import torch

        precision = self.settings.precision
        if precision == "fp32":
            return ""
        leaves = [t for t in nested.leaves(output) if t.is_floating_point()]
        bad = sum(int((~torch.isfinite(t)).sum()) for t in leaves)
        if not bad:
            return ""
        total = sum(t.numel() for t in leaves)
        return (f"at {precision} its reference output has {bad} of {total} "
                f"elements NaN/Inf (inputs or activations beyond the range of "
                f"{precision}): it cannot be judged at this precision")

    def _state_kept(self, case: Case, output: Any, seed: int) -> str:
        """Why the reference cannot be judged against, when a second call on the same draw
        (same inputs, same random state) answers otherwise: its forward keeps state (upstream
        v0's VanillaRNN overwrites its hidden state), so the expected answer depends on how
        often a model was called, and a candidate that keeps the same state would fail its
        timed calls for being faithful. "" for a reference that answers alike (its lockstep
        twin set where two fresh ones called alike agree)."""
        inputs = self.inputs(seed)
        before = loading.rng_states(self.device)
        again = self.model()(*inputs)
        atol, rtol = self.tolerances(case)
        verdict = correctness.compare(output, again, atol, rtol)
        if not differs_elementwise(verdict):
            # A reference that draws random numbers in forward (train-mode dropout) has one
            # right answer per seeded trial, none for the unseeded timed calls: when forward
            # moved the random state, a third call without repeating it tells.
            if loading.rng_states(self.device) != before:
                self.stochastic = differs_elementwise(correctness.compare(
                    output, self.model()(*inputs), atol, rtol))
            return ""
        if lockstep.reproducible(self.fresh_model, inputs, lambda a, b: not differs_elementwise(
                correctness.compare(a, b, atol, rtol))):
            self.lockstep = Lockstep(self.fresh_model, self.inputs)
            return ""
        return ("its reference answers the same inputs differently on a second call (its "
                "forward keeps state between calls), and two fresh references called alike "
                "answer differently, so no candidate can be judged against it: "
                + verdict.message.splitlines()[0])
