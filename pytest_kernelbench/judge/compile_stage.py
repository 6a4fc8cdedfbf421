"""The compile stage: the candidate loaded in its worker (and its extension built, once per
source), with the problem's reference checked first."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from pytest_kernelbench import faults
from pytest_kernelbench.building import builds
from pytest_kernelbench.isolation import wire
from pytest_kernelbench.isolation.sandbox import Fault, Reply
from pytest_kernelbench.judge import upstream
from pytest_kernelbench.judge.context import StageContext
from pytest_kernelbench.judge.outcome import Outcome, base_record, failed
from pytest_kernelbench.record import Record, UpstreamVerdict, add_flag, charge
from pytest_kernelbench.suite.discovery import Case
from pytest_kernelbench.suite.scan import scan_source

USES_PROBLEM_NAMES = "uses_problem_names"


def waits_for_a_build(source: str, device: str) -> bool:
    """Whether the compile item waits for the run's build pool (see Evaluator.compile)."""
    return builds.needs_build(source) and not (device == "cpu" and builds.needs_cuda(source))


@dataclass(frozen=True)
class BuildFacts:
    """What the run knows of the candidate's build before its worker loads it."""

    started_s: float  # builds made since then are this run's
    waited_s: float | None  # how long the compile item waited for the build pool
    entry_of: Callable[[Path], dict[str, Any] | None]  # the build phase's entry for a folder


def note_outside_names(record: Record, names: list[str]) -> None:
    """Say which globals the candidate took from the problem's namespace, as upstream's shared
    namespace gives them (loading.import_candidate): it passes here as it does there, and
    anyone reading its source sees where those names come from."""
    record["outside_names"] = names
    if names:
        add_flag(record, f"{USES_PROBLEM_NAMES}: {', '.join(names)} "
                 "(defined in the problem file, as upstream's shared namespace has them)")


def remember_build_failure(ctx: StageContext, case: Case, reply: Reply | Fault) -> str:
    """A compiler failure in the worker is not run again for the same source. Returns the
    compiler lines recorded now ('' when none were)."""
    log = reply.details if isinstance(reply, Fault) else reply.log
    loaded = [] if isinstance(reply, Fault) else reply.header.get("extensions") or []
    folder = ctx.channel.build_folder(case)
    return builds.failure(folder) if builds.remember_failure(folder, log or "", loaded) \
        else ""


def compile_case(ctx: StageContext, case: Case, build: BuildFacts) -> Outcome:
    record = base_record(case)
    if case.candidate is None:
        record.update({"status": faults.MISSING, "error": "no candidate in this set"})
        return Outcome(faults.MISSING, f"set {case.set_name} has no candidate for "
                       f"{case.problem.key}", skipped=True, record=record)
    source = case.candidate.path.read_text(errors="replace")
    if ctx.device == "cpu" and builds.needs_cuda(source):
        message = "CUDA-only candidate: needs a CUDA device, this run uses cpu"
        record.update({"status": faults.UNSUPPORTED_DEVICE, "error": message})
        return Outcome(faults.UNSUPPORTED_DEVICE, message, skipped=True, record=record)
    # The problem first: if its inputs or reference fail, that is said of the problem
    # (ProblemError), before the candidate's worker makes the same inputs and is blamed.
    ctx.reference.output(case, ctx.input_seed(0))
    record["static_scan"] = scan_source(source)
    reply = _load(ctx, case, record, source, build)
    loaded = not isinstance(reply, Fault)
    if isinstance(reply, Reply):  # where the load's time went
        sandbox = ctx.channel.sandbox
        record["load_phases"] = {"worker_start": round(sandbox.start_s, 6),
                                 **sandbox.start_parts, **(reply.header.get("phases") or {})}
        note_outside_names(record, reply.header.get("outside_names") or [])
    record.update({
        "tf32_by_candidate": isinstance(reply, Reply) and bool(reply.header.get("tf32")),
        "extension": "none", "extension_error": None,
        "upstream": cast(UpstreamVerdict, upstream.UpstreamVerdict(
            ctx.settings.upstream_rules, compiled=loaded, correct=False).as_dict())})
    if builds.needs_build(source):
        extensions = (reply.header.get("extensions") or []) if isinstance(reply, Reply) else []
        log = reply.details if isinstance(reply, Fault) else reply.log
        state, error = builds.extension_status(ctx.channel.build_folder(case), extensions,
                                               build.started_s, log)
        record.update({"extension": state, "extension_error": error})
    if isinstance(reply, Fault):
        record["compiled"] = False
        record["correct"] = False
        return failed(record, reply.status, reply.message, reply.details)
    record["compiled"] = True
    return Outcome(faults.PASSED, record=record)


def _load(ctx: StageContext, case: Case, record: Record, source: str,
          build: BuildFacts) -> Reply | Fault:
    """The worker's load of the candidate; one that builds holds its build folder meanwhile,
    and seals (or discards) what it built."""
    assert case.candidate is not None
    if not builds.needs_build(source):
        return ctx.channel.ask(record, wire.Load(ctx.channel.loading(case)))
    folder = ctx.channel.build_folder(case)
    if build.waited_s is not None:
        charge(record, "build_wait", build.waited_s)
    record["prebuild"] = build.entry_of(folder)
    with builds.holding(folder, ctx.channel.device_aside):
        if not builds.intact(folder):
            builds.discard(folder)
            add_flag(record, "its cached build had changed since it was built: built again")
        sealed = (folder / builds.BUILT_MARKER).exists()
        reply = ctx.channel.ask(record, wire.Load(ctx.channel.loading(case)))
        if isinstance(reply, Reply) and builds.within(folder,
                                                      reply.header.get("extensions") or []):
            if sealed and not builds.intact(folder):  # its import built it again
                builds.left_to_its_item(folder)
            elif builds.sealable(folder):
                builds.seal(folder, case.candidate.path)  # built in the worker: seal it here
        remember_build_failure(ctx, case, reply)
    return reply
