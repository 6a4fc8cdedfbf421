"""What a run covers, decided before anything runs: its problems and cases (discovery, tags),
the device, files that match no problem, the costs that order it, the records a resumed run
reuses, and which cases this shard runs. The pytest run makes one at configure time; nothing
here knows pytest (a bad option or file is a PlanError, whose message names it)."""

from __future__ import annotations

import functools
import time

from pytest_kernelbench import confine
from pytest_kernelbench.building import cores
from pytest_kernelbench.engine import schedule
from pytest_kernelbench.gpu import devices
from pytest_kernelbench.isolation import ncu
from pytest_kernelbench.record import CaseKey, Fingerprint, Record
from pytest_kernelbench.reporting import resume
from pytest_kernelbench.reporting.progress import case_key
from pytest_kernelbench.settings import Settings
from pytest_kernelbench.suite import discovery
from pytest_kernelbench.suite.integrity import ProblemDigests
from pytest_kernelbench.suite.loading import problem_defect
from pytest_kernelbench.suite.manifest import Entry, load_manifest

_NO_ENTRY = Entry()


class PlanError(Exception):
    """A run that cannot start; the message names the option or the file."""


class RunPlan:
    """The cases of one run and what it knows of them before they run."""

    def __init__(self, settings: Settings, device: str, problems: list[discovery.Problem],
                 cases: list[discovery.Case], manifest: dict):
        self.settings = settings
        self.device = device
        self.problems = problems
        self.cases = cases
        self.manifest = manifest
        self.orphans: list[discovery.Unmatched] = []  # candidate files that match no problem
        self.misnamed: list = []  # (candidate, problem) whose file name says another problem
        self.costs: dict[tuple, float] = {}  # seconds per case, from an earlier report
        # the same, and the suite's own figures for the problems that report does not know:
        # what orders the cases and paces the run's estimate of its end
        self.expected_costs: dict[tuple, float] = {}
        self.costs_named = False  # the costs were named by --kb-costs (shards split by them)
        # The records an earlier run left that still stand for their case (--kb-resume);
        # those cases do not run again.
        self.resumed: dict[CaseKey, Record] = {}
        self.resume_read = 0  # how many records the --kb-resume file held
        # Hashed before any candidate runs; checked before every stage (see integrity.py).
        self.problem_digests = ProblemDigests([problem.path for problem in problems])
        # Problems that cannot be evaluated (no candidate stage runs against them, see
        # evaluation.ProblemError), checked once here where a set has a candidate for them.
        wanted = {case.problem for case in cases if case.candidate is not None}
        self.broken = {problem.path: defect for problem in sorted(wanted)
                       if (defect := problem_defect(problem.path)) is not None}
        self.started_s = time.time()  # before the builds: what they build counts as this run's

    @classmethod
    def make(cls, settings: Settings, worker_id: str | None, costs_named: bool) -> RunPlan:
        """The run's plan from its settings; worker_id: this process's xdist worker, whose GPU
        a plain 'cuda' binds to; costs_named: --kb-costs was given by name (an unreadable file
        is then an error, not ignored)."""
        try:
            all_problems = discovery.find_problems(settings.problems_dir, settings.levels)
            sets = {path.name: discovery.find_candidates(path) for path in settings.candidate_dirs}
        except discovery.DiscoveryError as exc:
            raise PlanError(str(exc)) from None
        manifest = load_manifest(settings.problems_dir)
        problems = all_problems
        if settings.tags:
            if not manifest:
                raise PlanError(f"--kb-tags: {settings.problems_dir} has no manifest.yaml "
                                "to read tags from")
            wanted = set(settings.tags)
            problems = [p for p in problems
                        if wanted & set(manifest.get((p.level, p.problem_id), _NO_ENTRY).tags)]
        if not problems:
            raise PlanError(f"no problems selected in {settings.problems_dir} "
                            f"(levels {','.join(map(str, settings.levels))}"
                            + (f", tags {','.join(settings.tags)})" if settings.tags else ")"))
        if settings.confine == "require" and not confine.landlock_abi():
            raise PlanError("--kb-confine=require: this kernel offers no Landlock to "
                            "confine candidates with")
        try:
            device = devices.resolve_device(settings.device, worker_id)
        except devices.DeviceUnavailable as exc:
            raise PlanError(f"--kb-device={exc}") from None
        try:
            cores.split_for(settings.build_cores, device)
        except cores.NoSplit as exc:
            raise PlanError(str(exc)) from None
        if settings.profile and not device.startswith("cuda"):
            raise PlanError(f"--kb-profile: Nsight Compute profiles CUDA kernels; the "
                            f"device is {device}")
        if settings.profile and ncu.find_ncu() is None:
            raise PlanError("--kb-profile: ncu (Nsight Compute) is not on PATH nor in "
                            "CUDA_HOME/bin")
        plan = cls(settings, device, problems, discovery.pair(problems, sets), manifest)
        known = discovery.problem_keys(settings.problems_dir)
        plan.orphans = [orphan for path in settings.candidate_dirs
                        for orphan in discovery.unmatched(path, sets[path.name], known)]
        plan.misnamed = [pair for found in sets.values()
                         for pair in discovery.misnamed(problems, found)]
        plan.costs_named = costs_named
        if settings.costs_path is not None:
            try:
                plan.costs = schedule.read_costs(settings.costs_path)
            except schedule.CostsError as exc:
                if costs_named:  # asked for by name: say so; else ignore it
                    raise PlanError(f"--kb-costs: {exc}") from None
        try:
            suite = schedule.suite_costs(settings.problems_dir, device)
        except schedule.CostsError as exc:
            raise PlanError(f"--kb-problems: {exc}") from None
        plan.expected_costs = schedule.with_suite_costs(plan.costs, suite)
        if settings.resume_path is not None:
            try:
                earlier = resume.read_records(settings.resume_path)
            except resume.ResumeError as exc:
                raise PlanError(f"--kb-resume: {exc}") from None
            plan.resumed = resume.reusable(earlier, plan.fingerprints)
            plan.resume_read = len(earlier)
        return plan

    @functools.cached_property
    def fingerprints(self) -> dict[CaseKey, Fingerprint | None]:
        """What each case's record is made from (see resume.py), by case key."""
        settings_key = resume.settings_digest(self.settings, self.device)

        def tolerances(problem: discovery.Problem) -> tuple:
            entry = self.manifest.get((problem.level, problem.problem_id), _NO_ENTRY)
            return (entry.atol, entry.rtol)

        return {case_key(case): resume.fingerprint(
            case, settings_key, self.problem_digests.digests[case.problem.path],
            tolerances(case.problem)) for case in self.cases}

    def wanted(self, case: discovery.Case) -> bool:
        """Whether this process runs the case: not resumed, and in its shard (--kb-shard)."""
        if case_key(case) in self.resumed:
            return False
        if self.settings.shard is None:
            return True
        return self.shards[case] == self.settings.shard[0]

    @functools.cached_property
    def shards(self) -> dict[discovery.Case, int]:
        # Every shard must split alike: by costs named on the command line only, never by the
        # default (this machine's last report, which differs from shard to shard).
        count = self.settings.shard[1] if self.settings.shard else 1
        return schedule.shard_of(self.cases, self.costs if self.costs_named else {}, count)

    def entry(self, problem: discovery.Problem) -> Entry:
        """The manifest's entry for a problem (an empty one where it has none)."""
        return self.manifest.get((problem.level, problem.problem_id), _NO_ENTRY)
