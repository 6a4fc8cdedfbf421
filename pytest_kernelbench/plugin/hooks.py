"""pytest hooks: thin glue between pytest and the modules that do the work."""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from pytest_kernelbench import confine
from pytest_kernelbench.building import builds
from pytest_kernelbench.engine import prebuild, schedule
from pytest_kernelbench.engine.judging import gpu_count, share_device
from pytest_kernelbench.engine.plan import PlanError, RunPlan
from pytest_kernelbench.judge.evaluation import Evaluator
from pytest_kernelbench.plugin import live, options, summary
from pytest_kernelbench.plugin.items import STAGES
from pytest_kernelbench.record import from_json
from pytest_kernelbench.reporting import progress, resume
from pytest_kernelbench.reporting.progress import case_key
from pytest_kernelbench.reporting.results import RunResults, build_entries
from pytest_kernelbench.settings import Settings
from pytest_kernelbench.suite import discovery, loading

SUITE_FILE = Path(__file__).with_name("items.py")
MARKERS = {
    "kb_compile": "KernelBench stage: import, build and construct the candidate",
    "kb_correct": "KernelBench stage: compare the candidate's outputs with the reference's",
    "kb_speed": "KernelBench stage: time the candidate against the eager baseline",
    "kb_level1": "KernelBench level 1 problem (single operators)",
    "kb_level2": "KernelBench level 2 problem (fusion chains)",
    "kb_level3": "KernelBench level 3 problem (full architectures)",
}


def pytest_addoption(parser: pytest.Parser) -> None:
    options.add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    for name, text in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {text}")
    settings = options.read_settings(config)
    if settings is None:
        return
    if config.args_source == pytest.Config.ArgsSource.TESTPATHS:
        # `pytest --kb-candidates=X` alone evaluates and collects nothing from the ini's
        # testpaths (pytest_ignore_collect): the run's arguments become what pytest takes
        # without testpaths, so that its header names no folder the run does not use.
        config.args = [str(config.invocation_params.dir)]
        config.args_source = pytest.Config.ArgsSource.INVOCATION_DIR
    summary.hide_benchmark_table(config, settings.benchmark_table)
    run = KernelBenchRun.start(config, settings)
    config.stash[RUN_KEY] = run
    config.pluginmanager.register(run, "kernelbench-run")


@pytest.fixture(scope="session")
def kb_evaluator(request: pytest.FixtureRequest):
    run = request.config.stash[RUN_KEY]
    plan = run.plan
    evaluator = Evaluator(plan.settings, plan.device, plan.manifest, plan.problem_digests,
                          plan.started_s, plan.broken, xdist_worker(request.config))
    share_device(evaluator, xdist_worker_count(request.config),
                 gpu_count(run.settings.device, run.device))
    if run.build_pool is not None:  # a case's compile item waits for its own build only
        evaluator.wait_for_build = run.build_pool.wait_for
        evaluator.build_entry = run.build_pool.entry
    yield evaluator
    evaluator.close()


class KernelBenchRun:
    """The state of one evaluation run, registered as a plugin while the run is active: its
    plan (engine/plan.py, what it covers) and what pytest's hooks add to it as it runs."""

    def __init__(self, config: pytest.Config, plan: RunPlan):
        self.config = config
        self.plan = plan
        # read by the hooks below and by the evaluator fixture; the plan owns them
        self.settings, self.device, self.cases = plan.settings, plan.device, plan.cases
        self.problems, self.manifest = plan.problems, plan.manifest
        self.builds: list = []  # extension builds run ahead of the items (builds.Build)
        self.build_pool: Any = None  # pool.BuildPool, building while the items run
        self.build_lines: list[str] = []  # its progress, printed between items
        self.results = RunResults(plan.settings, plan.device, {}, len(STAGES) - 1)
        # The cases the run covers and their items still to report, once collected.
        self.progress: progress.Progress | None = None
        self.plot_line: str | None = None  # where --kb-plot wrote, said in the summary
        # xdist's controller: where its workers say a build is over (schedule.next_ready)
        self.settled_folder: Path | None = None
        # its cases' places by cost, and those that wait for a build, with their candidate
        self._ranks: tuple[dict[str, int], dict[str, Path]] | None = None

    @classmethod
    def start(cls, config: pytest.Config, settings: Settings) -> KernelBenchRun:
        loading.use_huge_pages()  # before collection loads problems and their inputs
        try:
            plan = RunPlan.make(settings, xdist_worker(config),
                                costs_named=bool(config.getoption("kb_costs")))
        except PlanError as exc:
            raise pytest.UsageError(str(exc)) from None
        run = cls(config, plan)
        if settings.resume_path is not None:
            run.results.resume(plan.resumed)
        run.results.fingerprints = plan.fingerprints
        return run

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        # Records are streamed as they settle, by the process that writes the report.
        if xdist_worker(self.config) is None:
            self.results.open_stream(self.plan.resumed)
        # What runs, said while it runs (live.py): weighed by what each case is expected to cost.
        live.register(self.config, self.settings.heartbeat_s, {
            f"{case.problem.key}[{case.id}]": schedule.expected_cost(case, self.plan.expected_costs)
            for case in self.cases if case.candidate is not None})

    def pytest_runtest_logfinish(self) -> None:
        self.print_build_lines()

    def print_build_lines(self) -> None:
        """The build pool's progress, written from this thread (the pool's thread only queues
        it), so that it never cuts into pytest's own lines."""
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        while reporter is not None and self.build_lines:
            if self.config.get_terminal_writer().width_of_current_line:
                reporter.write("\n")  # after -q's dots, which write_line does not end
            reporter.write_line(self.build_lines.pop(0))  # pop: the pool may append meanwhile

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.settled_folder is not None:
            shutil.rmtree(self.settled_folder, ignore_errors=True)
        if self.build_pool is not None:  # an interrupted run leaves no compiler running
            self.build_pool.close(stop=bool(session.shouldfail or session.shouldstop)
                                  or exitstatus == pytest.ExitCode.INTERRUPTED)
            self.print_build_lines()
        if hasattr(self.config, "workeroutput"):  # an xdist worker: its builds go to the report
            self.config.workeroutput["kb_builds"] = build_entries(self.builds)
            return
        if not self.config.option.collectonly:
            self.settle_progress()
        # Written here, before the terminal summary, and also when the run was interrupted.
        self.results.add_builds(build_entries(self.builds))
        self.results.write_report()
        self.results.write_feedback()
        self.plot_line = self.results.write_plots()
        self.results.close()

    def select(self, nodeids: list[str] | None) -> None:
        """The cases this run covers, from the items pytest selected (None: all of them); the
        records of those without a candidate settle now."""
        self.progress = progress.Progress((case for case in self.cases if self.plan.wanted(case)),
                                          nodeids)
        for case in self.progress.missing:
            self.results.add(progress.missing_record(case), self.results.final_stage)

    def say_resumed(self) -> None:
        """Once the cases are known: what --kb-resume reused, and how many cases still run."""
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if self.settings.resume_path is None or self.progress is None or reporter is None \
                or self.config.get_verbosity() < -1:
            return
        running = sum(case.candidate is not None for case in self.progress.cases)
        reporter.write_line(resume.reuse_line(len(self.plan.resumed), self.plan.resume_read,
                                              self.settings.resume_path, running))

    def settle_progress(self) -> None:
        """How many selected cases the run did not settle, and the command that finishes it."""
        if self.progress is None:  # stopped before its items were collected
            self.select(None)
        assert self.progress is not None
        unfinished = self.progress.unfinished()
        cases = {case_key(case): case for case in self.progress.cases}
        command = None
        if unfinished and self.settings.report_path is not None:
            params = self.config.invocation_params
            command = progress.resume_command(params.args, self.settings.report_path, params.dir,
                                              module=Path(sys.argv[0]).name == "__main__.py")
        self.results.stopped_before({key: progress.not_run_record(cases[key])
                                     for key in unfinished}, len(unfinished), command)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session):
        try:
            return (yield)
        except RuntimeError as exc:
            interrupt = lost_interrupt(exc)
            if interrupt is None:
                raise
            raise interrupt from None

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node, ids: list[str]) -> None:
        # xdist's controller collects nothing itself: every worker sends the same ids.
        if self.progress is None:
            self.select(list(ids))
            self.say_resumed()

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node) -> None:
        if self.settled_folder is None:
            self.settled_folder = Path(tempfile.mkdtemp(prefix="kb-settled-"))
        node.workerinput[SETTLED_INPUT] = str(self.settled_folder)

    def ready_case(self, queued: Iterable[str]) -> str | None:
        """The queued case to hand out next (schedule.next_ready)."""
        if self.settled_folder is None:
            return None
        if self._ranks is None:  # each candidate read once
            cases = [case for case in self.cases if case.candidate is not None]
            scopes = {case: scope_of(case) for case in cases}
            self._ranks = (
                {scopes[case]: rank for rank, case in enumerate(
                    schedule.longest_first(cases, self.plan.expected_costs))},
                {scopes[case]: case.candidate.path for case in cases  # type: ignore[union-attr]
                 if candidate_builds(case)})
        rank, waiting = self._ranks
        return schedule.next_ready(queued, rank, waiting, self.settled_folder)

    @pytest.hookimpl(optionalhook=True, tryfirst=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log):
        # The stages of a case must share a worker, where its memo and loaded candidate live;
        # xdist's default `load` (what -n N uses) would spread them. Its public `loadgroup`
        # mode would keep each case's xdist_group together, but it marks the group by
        # rewriting item ids, which pytest 9.2 no longer lets it do (every item then ran
        # alone): a scope of our own, from the item id, is what holds across versions. An
        # explicit other --dist mode is kept. A case whose build is over takes its place by
        # cost again, ahead of the cases that builds_last queued before it.
        if config.getvalue("dist") != "load":
            return None
        return case_scheduling(self.ready_case)(config, log)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node, error) -> None:
        self.results.add_builds(getattr(node, "workeroutput", {}).get("kb_builds", []))

    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        applied = confine.expected(self.settings.confine)
        if applied.confined:
            return [f"kernelbench: candidates confined: {applied.describe()}"]
        return [f"kernelbench: warning: candidates are not confined ({'; '.join(applied.notes)}):"
                " they run with this process's rights"]

    # --- collection -----------------------------------------------------------------------

    def pytest_ignore_collect(self, collection_path: Path, config: pytest.Config) -> bool | None:
        # `pytest --kb-candidates=X` alone evaluates; it does not also run the folder's tests.
        if config.args_source != pytest.Config.ArgsSource.ARGS:
            return True
        return None

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, session: pytest.Session, items: list) -> None:
        ours: list[pytest.Item] = []
        # A case without a candidate has no items (progress.py makes its record), nor does
        # a problem that no set has a candidate for.
        with_candidates = {case.problem for case in self.cases if case.candidate is not None}
        for problem in (problem for problem in self.problems if problem in with_candidates):
            module = pytest.Module.from_parent(session, path=SUITE_FILE, nodeid=problem.key,
                                               name=problem.key)
            module.stash[PROBLEM_KEY] = problem
            ours.extend(session.genitems(module))
        cases = self.cases
        if xdist_worker(self.config) is not None:
            # xdist hands cases out in this order: the longest first, so no GPU is left with
            # a long case at the end while the others idle.
            cases = schedule.longest_first(cases, self.plan.expected_costs)
        cases = schedule.builds_last(cases, candidate_builds, self.plan.costs)
        case_order = {case: index for index, case in enumerate(cases)}
        # Stages of one case run back to back, so the worker keeps the candidate loaded.
        ours.sort(key=lambda item: (case_order[item.callspec.params["kb_case"]],  # type: ignore[attr-defined]
                                    STAGES.index(item.originalname)))  # type: ignore[attr-defined]
        wanted = [self.plan.wanted(item.callspec.params["kb_case"]) for item in ours]  # type: ignore[attr-defined]
        dropped = [item for item, keep in zip(ours, wanted) if not keep]
        if dropped:  # resumed, or another shard's
            self.config.hook.pytest_deselected(items=dropped)
        items.extend(item for item, keep in zip(ours, wanted) if keep)

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        if "kb_case" not in metafunc.fixturenames:
            return
        parent = metafunc.definition.parent
        assert parent is not None
        problem = parent.stash[PROBLEM_KEY]
        params = [
            pytest.param(case, id=case.id, marks=[
                getattr(pytest.mark, f"kb_level{problem.level}"),
                pytest.mark.xdist_group(f"{problem.key}-{case.id}"),
            ])
            for case in self.cases if case.problem == problem and case.candidate is not None
        ]
        metafunc.parametrize("kb_case", params)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if self.config.option.collectonly:
            return
        if xdist_worker(self.config) is None:  # the process that writes the report
            self.select([item.nodeid for item in session.items])
            self.say_resumed()
        cases = [item.callspec.params["kb_case"] for item in session.items  # type: ignore[attr-defined]
                 if hasattr(item, "callspec") and "kb_case" in item.callspec.params]
        self.builds, self.build_pool = start_builds(self.config, self.settings, self.device,
                                                cases, self.build_lines)

    def pytest_itemcollected(self, item: pytest.Item) -> None:
        # Manifest tags become keywords, so `-k conv` also finds fusion chains that convolve.
        problem = item.parent.stash.get(PROBLEM_KEY, None) if item.parent else None
        if problem is not None:
            entry = self.plan.entry(problem)
            item.extra_keyword_matches.update(entry.tags)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call):
        report = yield
        problem = item.parent.stash.get(PROBLEM_KEY, None) if item.parent else None
        if problem is not None:
            # Headings and skip lines name the problem, not the plugin's own items.py.
            path, lineno, _ = report.location
            report.location = (path, lineno, item.nodeid)
            if report.skipped and isinstance(report.longrepr, tuple):
                report.longrepr = (problem.key, None, report.longrepr[2])
        return report

    # --- results --------------------------------------------------------------------------

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.progress is not None and progress.item_finished(report.when, report.passed):
            self.progress.reported(report.nodeid)
        for name, value in report.user_properties:
            if name == "kernelbench" and isinstance(value, dict):
                self.results.add(from_json(value["record"]), value["stage"])

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_terminal_summary(self, terminalreporter, config: pytest.Config):
        # Around every other part of the summary, pytest's own short summary (its FAILED
        # lines) and any plugin's (pytest-benchmark's table) included: the section is drawn
        # after them all, the last thing before pytest's result line, where it is read.
        try:
            return (yield)
        finally:
            # The report is already written (pytest_sessionfinish); this only displays.
            if xdist_worker(config) is None and self.results.all_records() \
                    and config.get_verbosity() >= -1:
                summary.write(terminalreporter, self.results, self.plan, self.plot_line,
                              config.get_verbosity() > 0)


def start_builds(config: pytest.Config, settings: Settings, device: str,
                 cases: list[discovery.Case], lines: list[str]) -> tuple[list, Any]:
    """Start building the selected candidates' extensions, in parallel and in the background
    while the items run: (the builds, the pool building them, or None where none is needed).
    Progress goes to lines, for the main thread to print."""
    processes = xdist_worker_count(config)  # each runs its share of one pool sized to the cores
    jobs = prebuild.pool_jobs(settings, device, processes)
    problems = builds.candidates_to_build(cases, device)
    if jobs == 0 or not problems:
        return [], None
    arch = builds.cuda_arch(device)
    planned = builds.plan(list(problems), settings.build_cache_root, arch, problems)
    quiet = xdist_worker(config) is not None or config.get_verbosity() < -1
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if not quiet and planned and reporter is not None:
        reporter.write_line(prebuild.plan_line(planned, jobs))
    # xdist's controller hands cases out by what its workers say is over (schedule.next_ready)
    settled = getattr(config, "workerinput", {}).get(SETTLED_INPUT)

    def on_over(build: builds.Build) -> None:
        if settled is not None:
            schedule.mark_settled(Path(settled), build.candidate, build.status)
    for build in planned:  # cached, or failed before: over already
        on_over(build)
    return planned, prebuild.start_pool(settings, device, arch, planned, processes,
                                        say=None if quiet else lines.append, on_over=on_over)


def candidate_builds(case: discovery.Case) -> bool:
    """Whether the case's candidate builds a C++/CUDA extension."""
    return case.candidate is not None and \
        builds.needs_build(case.candidate.path.read_text(errors="replace"))


def case_scheduling(next_case: Callable[[Iterable[str]], str | None]) -> type:
    """xdist's scheduler by scope, with a case's items as one scope (case_scope) and the next
    case handed out chosen by next_case from the queued ones (None: the first)."""
    from xdist.scheduler import LoadScopeScheduling

    class CaseScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return case_scope(nodeid)

        def _assign_work_unit(self, node) -> None:
            chosen = next_case(self.workqueue)
            if chosen is not None:
                self.workqueue.move_to_end(chosen, last=False)
            super()._assign_work_unit(node)

    return CaseScheduling


def scope_of(case: discovery.Case) -> str:
    """The xdist scope of a case's items (case_scope of each item's id)."""
    return f"{case.problem.key}[{case.id}]"


def case_scope(nodeid: str) -> str:
    """The items of one case share this: 'level1/1_Scale::test_speed[set-s0]' ->
    'level1/1_Scale[set-s0]'."""
    path, _, rest = nodeid.partition("::")
    return path + rest[rest.index("["):] if "[" in rest else nodeid


def xdist_worker(config: pytest.Config) -> str | None:
    """This process's xdist worker id ('gw0'), or None in the controller or without xdist."""
    return getattr(config, "workerinput", {}).get("workerid")


def xdist_worker_count(config: pytest.Config) -> int:
    """How many xdist workers the run has (1 without xdist)."""
    return int(getattr(config, "workerinput", {}).get("workercount") or 1)


def lost_interrupt(exc: BaseException) -> KeyboardInterrupt | None:
    """The Ctrl-C that a `release unlocked lock` error replaced, if it did.

    xdist's controller waits for its workers' events in `queue.Queue.get`, whose condition
    sits on a plain `threading.Lock`. When SIGINT lands while that wait re-takes the lock
    (busy at once when every worker got the same Ctrl-C and reports back), CPython raises
    KeyboardInterrupt from the acquire without the lock, and the `with` around the wait then
    fails to release it: pytest sees a RuntimeError, prints it as INTERNALERROR and skips the
    summary. The interrupt it replaced is what the run should end with."""
    context = exc.__context__
    if isinstance(exc, RuntimeError) and "release unlocked lock" in str(exc) \
            and isinstance(context, KeyboardInterrupt):
        return context
    return None


RUN_KEY = pytest.StashKey[KernelBenchRun]()
SETTLED_INPUT = "kb_settled"  # xdist's workerinput: the folder where workers say a build is over
PROBLEM_KEY = pytest.StashKey[discovery.Problem]()
