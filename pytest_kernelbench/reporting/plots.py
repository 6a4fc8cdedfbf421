"""PNG plots of a run's records (`--kb-plot=DIR`, `kernelbench-report plot`), with matplotlib.

matplotlib is an optional extra (`pip install pytest-kernelbench[plot]`); without it the run
says so in one line and writes no plots. Three figures, one line or point set per candidate set:
- speedup.png: each problem's best correct speedup, sorted, on a log scale, with p marked;
- fast_p.png: fast_p as a function of p;
- speed_of_light.png: speedup against the fraction of the device's speed of light reached.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from pytest_kernelbench.record import Record
from pytest_kernelbench.reporting import scoring


class PlotError(Exception):
    """Plots cannot be made here (matplotlib is missing)."""


def by_set(records: list[Record]) -> dict[str, list[Record]]:
    sets: dict[str, list[Record]] = defaultdict(list)
    for record in records:
        sets[record["candidate_set"]].append(record)
    return dict(sorted(sets.items()))


def best_speedups(records: list[Record]) -> list[float]:
    """Each problem's best correct speedup, ascending (problems without one left out)."""
    problems: dict[tuple[int, int], list[Record]] = defaultdict(list)
    for record in records:
        problems[(record["level"], record["problem_id"])].append(record)
    found = [scoring.best_speedup(samples) for samples in problems.values()]
    return sorted(s for s in found if s is not None and s > 0)


def fast_p_curve(records: list[Record], ps: list[float]) -> list[float]:
    return [scoring.fast_p(records, p) for p in ps]


def write_plots(records: list[Record], p: float, folder: Path) -> list[Path]:
    """The three figures in folder; returns their paths."""
    try:
        import matplotlib
    except ImportError:
        raise PlotError("plots need matplotlib: pip install 'pytest-kernelbench[plot]'") from None
    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    folder.mkdir(parents=True, exist_ok=True)
    sets = by_set([r for r in records if r.get("status") != "problem_error"])
    drawn = {"speedup.png": speedup_figure, "fast_p.png": fast_p_figure,
             "speed_of_light.png": speed_of_light_figure}
    return [_save(draw(plt, sets, p), folder / name) for name, draw in drawn.items()]


def speedup_figure(plt, sets: dict[str, list[Record]], p: float):
    """Each set's best speedup per problem, sorted."""
    figure, axes = plt.subplots(figsize=(8, 4.5))
    for name, members in sets.items():
        speeds = best_speedups(members)
        if speeds:
            axes.plot(range(1, len(speeds) + 1), speeds, marker=".", label=f"{name} ({len(speeds)})")
    axes.axhline(max(p, 1e-3), color="grey", linestyle="--", linewidth=1, label=f"p = {p:g}")
    axes.set_yscale("log")
    axes.set_xlabel("problems with a correct candidate, sorted by speedup")
    axes.set_ylabel("speedup over the baseline (log)")
    axes.set_title("Speedup per problem")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize="small")
    return figure


def fast_p_figure(plt, sets: dict[str, list[Record]], p: float):
    """fast_p of each set as p goes from 0 to its best speedup (at most 10)."""
    figure, axes = plt.subplots(figsize=(8, 4.5))
    top = max([2.0, *(s for m in sets.values() for s in best_speedups(m))])
    ps = [round(0.05 * i, 2) for i in range(0, int(min(top, 10.0) / 0.05) + 2)]
    for name, members in sets.items():
        axes.step(ps, fast_p_curve(members, ps), where="post", label=name)
    axes.axvline(p, color="grey", linestyle="--", linewidth=1, label=f"p = {p:g}")
    axes.set_xlabel("p (speedup threshold)")
    axes.set_ylabel("fast_p (fraction of all problems)")
    axes.set_ylim(0, 1.02)
    axes.set_title("fast_p as a function of p")
    axes.grid(True, alpha=0.3)
    axes.legend(fontsize="small")
    return figure


def speed_of_light_figure(plt, sets: dict[str, list[Record]], p: float):
    """Speedup against the fraction of the device's speed of light, per correct record."""
    figure, axes = plt.subplots(figsize=(8, 4.5))
    plotted = 0
    for name, members in sets.items():
        points = [(light["candidate_fraction"], r["speedup"]) for r in members
                  if r.get("correct") and r.get("speedup")
                  and (light := r.get("speed_of_light") or {}).get("candidate_fraction")]
        if points:
            plotted += len(points)
            fractions, speedups = zip(*points)
            axes.scatter(fractions, speedups, s=14, label=f"{name} ({len(points)})")
    axes.axhline(max(p, 1e-3), color="grey", linestyle="--", linewidth=1, label=f"p = {p:g}")
    axes.axvline(1.0, color="red", linestyle=":", linewidth=1,
                 label="speed of light (beyond it: check the timing)")
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("fraction of the device's speed of light the candidate reaches (log)")
    axes.set_ylabel("speedup (log)")
    axes.set_title("Speedup against speed of light" + ("" if plotted else
                                                        " (no record has speed-of-light figures)"))
    axes.grid(True, which="both", alpha=0.3)
    if plotted:
        axes.legend(fontsize="small")
    return figure


def _save(figure, path: Path) -> Path:
    import matplotlib.pyplot as plt

    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path
