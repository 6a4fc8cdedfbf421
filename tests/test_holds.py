from __future__ import annotations

from pytest_kernelbench.reporting.holds import device_schedule, hold_spans, timing_overlaps


def _held(problem_id: int, gpu: str, timing: str | None = "events", **stages) -> dict:
    return {"candidate_set": "s", "level": 1, "problem_id": problem_id, "sample": "s0",
            "placement": {"worker": "gw0", "device": "cuda:0", "gpu_uuid": gpu}, "held": stages,
            "timing": timing}


def test_a_timing_that_overlaps_other_work_on_its_gpu_is_found():
    records = [
        _held(1, "GPU-a", compile=[0, 1], correct=[1, 2], speed=[2, 5]),
        _held(2, "GPU-a", correct=[4, 6]),               # ran during problem 1's timing
        _held(3, "GPU-b", compile=[0, 3], speed=[3, 9]),  # another GPU: allowed
        _held(4, "GPU-b", compile=[1, 2], correct=[1, 2.5]),  # shared holds may overlap
    ]
    assert timing_overlaps(records) == [("s/L1/1/s0:speed", "s/L1/2/s0:correct")]
    assert timing_overlaps(records[2:]) == []
    # Nsight Compute's replays hold the device alone as a timing does
    profiled = _held(5, "GPU-b", timing=None, correct=[0, 1], ncu=[2.2, 2.4])
    assert timing_overlaps([records[3], profiled]) == [("s/L1/4/s0:correct", "s/L1/5/s0:ncu")]
    # the speed item of a case that failed only skips, under the shared lock
    skipped = _held(5, "GPU-a", timing=None, correct=[0, 1], speed=[4.5, 4.6])
    assert timing_overlaps([records[1], skipped]) == []


def test_the_device_schedule_counts_timings_alone_shared_holders_and_drains():
    records = [
        _held(1, "GPU-a", compile=[0, 2], correct=[2, 3], speed=[4, 5]),
        _held(2, "GPU-a", compile=[1, 3.5]),
        _held(3, "GPU-a", speed=[5, 6]),                  # right after 1's: the same drain
        _held(4, "GPU-a", compile=[6.5, 7], speed=[8, 9]),  # shared work came between: another
        _held(5, "GPU-a", timing=None, correct=[9, 9.5], speed=[9.5, 10]),  # failed: not timed
    ]
    (schedule,) = device_schedule(records).values()
    assert schedule == {"span_s": 10.0, "exclusive_s": 3.0, "idle_s": 2.0,
                        "shared_s_by_holders": {1: 3.0, 2: 2.0}, "timings": 3, "batches": 2}
    assert set(device_schedule(records + [_held(6, "GPU-b", speed=[0, 1])])) == {"GPU-a", "GPU-b"}


def test_the_spans_a_stage_stepped_aside_for_are_left_out_of_its_hold():
    record = {"held": {"compile": [10.0, 20.0], "correct": [20.0, 21.0]},
              "aside": {"compile": [[12.0, 15.0], [16.0, 18.0]]}}
    assert hold_spans(record) == [("compile", 10.0, 12.0), ("compile", 15.0, 16.0),
                                  ("compile", 18.0, 20.0), ("correct", 20.0, 21.0)]


def test_the_cpus_of_two_cluster_nodes_are_two_devices():
    def on(node: str, **stages) -> dict:
        return {**_held(1, None, **stages), "placement": {"device": "cpu", "gpu_uuid": None,
                                                          "node": node}}

    records = [on("a", speed=[0, 2]), on("b", correct=[1, 3])]
    assert timing_overlaps(records) == []
    assert set(device_schedule(records)) == {"a:cpu", "b:cpu"}
    assert timing_overlaps([*records, on("a", correct=[1, 3])]) != []
