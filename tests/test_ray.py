"""The batch API on a Ray cluster (engine/cluster.py): a cluster of two CPU nodes on this host
judges as the local engine does, an actor killed mid-attempt costs only that attempt, and a
hostile attempt only its own record. Skipped where Ray is not installed."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import pytest

ray = pytest.importorskip("ray", reason="Ray is not installed: pip install "
                                        "'pytest-kernelbench[ray]'")

from attempts import ABORTS, EXITS, SLOW  # noqa: E402

from pytest_kernelbench import Session, record  # noqa: E402
from pytest_kernelbench.building import builds  # noqa: E402

EXAMPLES = Path(__file__).parent / "examples"
RELU = EXAMPLES / "problems" / "level1" / "2_ReLU.py"
GOOD = EXAMPLES / "candidates" / "good" / "level1" / "2_ReLU.py"
WRONG = EXAMPLES / "candidates" / "broken" / "level1" / "2_ReLU" / "wrong_values.py"
FAST = {"device": "cpu", "trials": 2, "time_budget_s": 0.05, "p": 0.0}
OPEN = {**FAST, "confine": "off"}  # the slow candidate writes a marker file


@pytest.fixture(scope="module")
def nodes():
    """A Ray cluster of two nodes of one CPU each, on this host: the Ray ids of its nodes."""
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True,
                      head_node_args={"num_cpus": 1, "include_dashboard": False})
    cluster.add_node(num_cpus=1)
    try:
        ray.init(address=cluster.address, log_to_driver=False)
        cluster.wait_for_nodes()
        yield {node["NodeID"] for node in ray.nodes() if node["Alive"]}
    finally:
        ray.shutdown()
        cluster.shutdown()


def test_the_package_imports_without_loading_ray():
    check = "import sys; from pytest_kernelbench import Session; print('ray' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "False"


@pytest.mark.parametrize(("gpus", "judges", "expected"), [
    (1, None, (8, 0.125)),  # eight to a GPU, as a session on one host
    (2, None, (16, 0.125)),
    (1, 1, (1, 1.0)),
    (2, 3, (3, 0.5)),  # two on one GPU, one on the other
    (1, 3, (3, 0.3333)),  # in Ray's ten-thousandths, three fit one GPU
])
def test_a_clusters_gpus_get_eight_judges_each_claiming_its_share(gpus, judges, expected):
    from pytest_kernelbench.engine.cluster import gpu_judges

    count, share = gpu_judges(gpus, judges)
    assert (count, share) == expected
    assert share * -(-count // gpus) <= 1  # a GPU's judges fit it


@pytest.mark.parametrize(("device", "words"), [("cuda:1", "places its judges itself"),
                                               ("cuda", "has no GPU")])
def test_a_cluster_refuses_a_device_it_cannot_give(nodes, device, words):
    with pytest.raises(ValueError, match=words):
        Session(device=device, cluster="ray")
    assert ray.is_initialized()  # the session did not start Ray, so it leaves it be


def test_a_cluster_judges_as_the_local_engine_does(nodes, correct_and_timed):
    pairs = [(RELU, GOOD), (RELU, WRONG), (RELU, ABORTS)]
    with Session(cluster="ray", judges=2, **{**FAST, "device": "auto"}) as session:
        assert (session.device, session._cluster.judges) == ("cpu", 2)  # type: ignore[union-attr]
        remote = dict(session.evaluate_many(pairs))
    with Session(judges=2, **FAST) as session:
        local = dict(session.evaluate_many(pairs))
    for good in (remote[0], local[0]):
        correct_and_timed(good)
    for index in (1, 2):
        assert remote[index]["status"] == local[index]["status"]
        assert remote[index]["verdicts"] == local[index]["verdicts"]
    assert [remote[i]["status"] for i in (1, 2)] == ["mismatch", "crashed"]
    # Each record names the node that judged it; the two judges took a node each.
    where = [remote[i]["placement"] for i in range(3)]
    assert {w["node"] for w in where} == {socket.gethostname()}
    assert {w["node_id"] for w in where} == nodes  # one CPU a node, one CPU a judge
    assert "node" not in local[0]["placement"]
    # The judges read the copies their actors wrote, not the files of this host.
    assert all(Path(r["candidate_path"]).parent.parent.name.startswith("kernelbench-ray-")
               for r in remote.values())
    for one in remote.values():
        jsonschema.validate(one, {"$defs": record.schema()["$defs"], "$ref": "#/$defs/record"})


# A ReLU that fails where its process was told how many threads to use: a judge on a node must
# run it with the driver's environment, not the OMP_NUM_THREADS=1 Ray sets in its actors.
THREADS_AS_THE_DRIVERS = """
import os
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        if "OMP_NUM_THREADS" in os.environ:
            raise RuntimeError("OMP_NUM_THREADS=" + os.environ["OMP_NUM_THREADS"])
        return torch.relu(x)
"""


def test_a_judge_on_a_node_runs_with_the_drivers_thread_settings(nodes, monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    with Session(cluster="ray", judges=1, **FAST) as session:
        remote = session.submit(RELU, THREADS_AS_THE_DRIVERS).result(timeout=300)
    assert remote["verdicts"]["correct"] == "passed", remote["error"]


# A candidate that fails unless it runs at the niceness of the test's process (the driver's):
# Ray starts its actors at 15, below the builds beside them.
NICENESS_AS_THE_DRIVERS = f"""
import os
import torch


class ModelNew(torch.nn.Module):
    def forward(self, x):
        if os.getpriority(os.PRIO_PROCESS, 0) != {os.getpriority(os.PRIO_PROCESS, 0)}:
            raise RuntimeError("niceness " + str(os.getpriority(os.PRIO_PROCESS, 0)))
        return torch.relu(x)
"""


def test_a_judge_on_a_node_runs_at_the_drivers_niceness(nodes):
    with Session(cluster="ray", judges=1, **FAST) as session:
        remote = session.submit(RELU, NICENESS_AS_THE_DRIVERS).result(timeout=300)
    assert remote["verdicts"]["correct"] == "passed", remote["error"]


@pytest.mark.parametrize(("starter", "compilers"), [(0, 10), (-5, 10), (15, 16), (19, 19)])
def test_compilers_run_below_the_thread_that_starts_them(starter, compilers):
    assert builds.build_niceness(starter) == compilers


@pytest.mark.parametrize(("driver", "expected"), [
    ({"OMP_NUM_THREADS": None}, {"PATH": "/bin"}),  # Ray's 1 dropped: unset on the driver
    ({"OMP_NUM_THREADS": "4"}, {"PATH": "/bin", "OMP_NUM_THREADS": "4"}),
])
def test_a_judges_environment_takes_the_drivers_thread_settings_over_rays(driver, expected):
    from pytest_kernelbench.engine.cluster import with_threads

    assert with_threads({"PATH": "/bin", "OMP_NUM_THREADS": "1"}, driver) == expected


CPP_RELU = EXAMPLES / "candidates" / "cpp_ext" / "level1" / "2_ReLU.py"


def test_an_attempt_that_builds_is_built_ahead_on_a_judging_node(nodes, tmp_path,
                                                                  torch_headers,
                                                                  correct_and_timed):
    cache = tmp_path / "cache"
    torch_headers.link_into(cache)
    source = CPP_RELU.read_text().replace("kb_test_cpu_relu", "kb_test_ray_relu")
    with Session(cluster="ray", judges=1, build_cache=cache, **FAST) as session:
        built = session.submit(RELU, source).result(timeout=600)
        builders = session._cluster.builders  # type: ignore[union-attr]
        [node] = builders.hosts  # the one node its build went to
        assert builders.under_way == {node: 0}
    correct_and_timed(built)
    # The node's build host built it (its own copy of the candidate), before any judge did.
    [marker] = cache.glob(f"*/{builds.BUILT_MARKER}")
    made_from = Path(json.loads(marker.read_text())["candidate"])
    assert made_from.parent.parent.name.startswith("kernelbench-ray-")
    assert made_from.parent.parent != Path(built["candidate_path"]).parent.parent
    # Whichever node judged it found the build in its cache (both nodes' here), with its entry.
    assert built["extension"] == "built" and built["prebuild"]["status"] == "built"


def test_a_build_that_failed_ahead_is_in_the_record_as_on_one_host(nodes, tmp_path,
                                                                    torch_headers):
    source = CPP_RELU.read_text().replace("kb_test_cpu_relu", "kb_test_ray_broken").replace(
        "return out;", "return out")  # a compiler error
    records = {}
    for where, cluster in (("cluster", "ray"), ("local", None)):
        cache = tmp_path / where
        torch_headers.link_into(cache)
        with Session(cluster=cluster, judges=1, build_cache=cache, **FAST) as session:
            records[where] = session.submit(RELU, source).result(timeout=600)
    for judged in records.values():
        assert judged["status"] == "compile_error", judged["error"]
        assert judged["prebuild"]["status"] == "failed"


def test_an_actor_killed_mid_attempt_costs_only_that_attempt(nodes, tmp_path):
    marker = tmp_path / "slow"
    with Session(cluster="ray", judges=1, **OPEN) as session:
        running = session.submit(RELU, SLOW.format(marker=str(marker), seconds=30))
        deadline = time.monotonic() + 180
        while not marker.exists():  # the candidate is loaded in the actor's judge
            assert time.monotonic() < deadline and not running.done()
            time.sleep(0.1)
        [judge] = session._batch._judges  # type: ignore[union-attr]
        ray.kill(judge.actor)
        record = running.result(timeout=60)
        after = session.submit(RELU, WRONG).result(timeout=300)
    assert record["status"] == "not_run"
    assert "on the Ray cluster" in record["error"] and "ActorDiedError" in record["error"]
    assert after["status"] == "mismatch"  # judged by a fresh actor


def test_a_hostile_attempt_costs_only_its_own_record(nodes):
    with Session(cluster="ray", judges=1, **FAST) as session:
        exited = session.evaluate(RELU, EXITS)  # evaluate too is judged on the cluster
        [judge] = session._batch._judges  # type: ignore[union-attr]
        after = session.submit(RELU, WRONG).result(timeout=300)
        assert session._batch._judges == [judge]  # type: ignore[union-attr]
    assert exited["status"] == "exited"  # the status it has on one host
    assert after["status"] == "mismatch"
    assert exited["placement"] == after["placement"]


def test_a_build_host_that_dies_leaves_the_build_to_the_judge():
    from types import SimpleNamespace

    from pytest_kernelbench.engine import cluster
    from pytest_kernelbench.suite import discovery

    def died(*args):
        raise RuntimeError("ActorDiedError: the build host's node left the cluster")

    [case] = [c for c in discovery.pair(discovery.find_problems(EXAMPLES / "problems", (1,)),
                                        {"cpp": [discovery.Candidate("cpp", 1, 2, "s0",
                                                                     CPP_RELU)]})
              if c.candidate is not None]
    settled = []
    build = cluster.NodeBuild(SimpleNamespace(build=SimpleNamespace(remote=died)), "node-a",
                              case, settled.append)
    deadline = time.monotonic() + 30
    while not settled:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    # settled, with nothing handed: the attempt goes to a judge, which builds it itself
    assert (build.status, build.handed(), settled) == ("elsewhere", None, ["node-a"])


def _node_builders(**settings):
    """NodeBuilders of one judging node whose build host is a stand-in, the example ReLU's
    plain and C++ cases, and the nodes whose host was started."""
    from types import SimpleNamespace

    from pytest_kernelbench.engine import cluster
    from pytest_kernelbench.settings import Settings
    from pytest_kernelbench.suite import discovery

    def ended(*args):
        raise RuntimeError("no build host in this test")

    problems = discovery.find_problems(EXAMPLES / "problems", (1,))
    plain, extension = (next(case for case in discovery.pair(
        problems, {"s": [discovery.Candidate("s", 1, 2, "s0", path)]}) if case.candidate)
        for path in (GOOD, CPP_RELU))
    builders = cluster.NodeBuilders(Settings(problems_dir=EXAMPLES / "problems",
                                             candidate_dirs=(), device="cpu", **settings), "cpu")
    builders.judges = {"node-a": 1}
    started: list[str] = []
    builders._start = lambda node: started.append(node) or SimpleNamespace(  # type: ignore
        build=SimpleNamespace(remote=ended))
    return builders, plain, extension, started


def test_an_attempt_that_builds_nothing_waits_for_no_build_actor():
    builders, plain, extension, started = _node_builders()
    # The plain candidate is ready as it is: no round trip to a node, where it would wait
    # for a build actor to start and answer that it builds nothing.
    assert builders.build(plain) is None and started == []
    assert builders.build(extension) is not None and started == ["node-a"]


def test_with_build_jobs_0_a_cluster_builds_nothing_ahead():
    # As on one host, each attempt builds in its compile stage (a node's build actor built it
    # ahead all the same).
    builders, plain, extension, started = _node_builders(build_jobs=0)
    assert builders.build(extension) is None and builders.build(plain) is None
    assert started == []
