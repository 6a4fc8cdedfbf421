"""A pytest plugin for measuring what admission by a problem's footprint costs a run: loaded with
`-p no_admission` (benchmarks/ on PYTHONPATH; xdist's workers load it too), every stage is
admitted beside the others, as before admission existed. A stage that runs out of memory is
still judged again alone, so verdicts stay fair; only the wall time and the waits differ.

    PYTHONPATH=benchmarks pytest -p no_admission --kb-problems=... --kb-candidates=... -n 8
"""

from pytest_kernelbench.gpu import memory


def _always_fits(reference_bytes: int | None, free_bytes: int | None) -> bool:
    return True


memory.fits_beside = _always_fits
