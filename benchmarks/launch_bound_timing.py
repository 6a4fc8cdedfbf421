"""Launch-bound timings on a GPU, with the L2 flush waited for before each call and without.

  python benchmarks/launch_bound_timing.py [--repeats N] [--budget SECONDS]

Times small eager models against themselves and against a fused form with
timing.measure_interleaved, as the worker does (rotating input draws, L2 flush), several
times over, once with each call started on an idle GPU (timing.FLUSH_SETTLES, as shipped)
and once with the flush still running while the call is enqueued. Prints per model and mode
each side's median and median/minimum, and the spread of the speedup over the repeats:
identical sides must read 1.00 every time, and a side's median should sit near its minimum.
"""

from __future__ import annotations

import argparse
import statistics

import torch

from pytest_kernelbench.gpu import timing


class Chain(torch.nn.Module):
    """`ops` elementwise kernels in a row: on a small tensor each is a launch, little work."""

    def __init__(self, ops: int):
        super().__init__()
        self.ops = ops

    def forward(self, x):
        for _ in range(self.ops):
            x = torch.sigmoid(x * 1.01)
        return x


class Fused(torch.nn.Module):
    def forward(self, x):
        return torch.sigmoid(x * 1.01)


def measure(baseline, candidate, size: int, budget_s: float, device: str) -> tuple[dict, float]:
    sets = [[torch.randn(size, device=device)] for _ in range(3)]
    sides = {"baseline": timing.RotatingSide(baseline, sets, False, device),
             "candidate": timing.RotatingSide(candidate, sets, False, device)}
    turns = {name: side.turn(lambda output: None) for name, side in sides.items()}
    measured = timing.measure_interleaved(turns, device, budget_s, min_rounds=20)
    stats = {name: timing.summarize(samples) for name, samples in measured.samples_s.items()}
    return stats, timing.speedup(stats["baseline"], stats["candidate"])


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--budget", type=float, default=0.3)
    args = parser.parse_args()
    device = "cuda"
    cases = {"3 ops against itself": (Chain(3), Chain(3), 1 << 16),
             "30 ops against itself": (Chain(30), Chain(30), 1 << 16),
             "3 ops against 1": (Chain(3), Fused(), 1 << 16),
             "3 ops on 64M floats against itself": (Chain(3), Chain(3), 1 << 26)}
    for mode, settles in (("settled", True), ("racing", False)):
        timing.FLUSH_SETTLES = settles
        for name, (baseline, candidate, size) in cases.items():
            ratios, lines = [], []
            for _ in range(args.repeats):
                stats, ratio = measure(baseline, candidate, size, args.budget, device)
                ratios.append(ratio)
                lines.append(" ".join(f"{side} {s.median_s * 1e6:.1f} us ({s.median_s / s.min_s:.2f}x min)"
                                      for side, s in stats.items()))
            spread = (max(ratios) - min(ratios)) / statistics.median(ratios)
            print(f"{mode:9} {name:36} speedups {' '.join(f'{r:.3f}' for r in ratios)} "
                  f"(spread {spread:.1%}); first: {lines[0]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
