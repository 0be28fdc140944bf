"""Boschloo's and Fisher's one-sided tests in numpy (judge/exact.py) against scipy, table by table.

Every table [k_b, k_c] of every pair of sizes up to --max-n per side (30 by default: about 245,000
tables, half an hour on one core), then a seeded random sample of tables up to 200 x 200. Prints
the largest difference from scipy, and where scipy's optimizer stops short of the maximum over the
common rate (ours larger), the largest such gap, checked against a dense grid.

Run: .venv/bin/python bench/bench_exact_parity.py [--max-n 30] [--random 200] [--seed 7]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scipy.stats import boschloo_exact, hypergeom

from stabilitygate.judge.exact import boschloo_greater, boschloo_table, fisher_greater

TOLERANCE = 1e-9


def scipy_boschloo(k_b: int, n_b: int, k_c: int, n_c: int) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(boschloo_exact([[k_b, k_c], [n_b - k_b, n_c - k_c]], alternative="greater").pvalue)


class Tally:
    def __init__(self) -> None:
        self.tables = 0
        self.worst = 0.0  # largest |ours - scipy| where scipy is not short
        self.short = 0  # scipy below ours by more than TOLERANCE
        self.worst_short = 0.0
        self.worst_fisher = 0.0
        self.worst_table_fn = 0.0  # boschloo_table against boschloo_greater

    def add(self, k_b: int, n_b: int, k_c: int, n_c: int, table: np.ndarray | None) -> None:
        if k_b + k_c in (0, n_b + n_c):
            return
        self.tables += 1
        ours, theirs = boschloo_greater(k_b, n_b, k_c, n_c), scipy_boschloo(k_b, n_b, k_c, n_c)
        if ours - theirs > TOLERANCE:
            self.short += 1
            self.worst_short = max(self.worst_short, ours - theirs)
        else:
            self.worst = max(self.worst, abs(ours - theirs))
        fisher = float(hypergeom.sf(k_b - 1, n_b + n_c, k_b + k_c, n_b))
        self.worst_fisher = max(self.worst_fisher, abs(fisher - fisher_greater(k_b, n_b, k_c, n_c)))
        if table is not None:
            self.worst_table_fn = max(self.worst_table_fn, abs(float(table[k_b, k_c]) - ours))

    def line(self, label: str) -> str:
        return (
            f"{label}: {self.tables} tables; max |ours - scipy| {self.worst:.2e}; scipy short of the maximum "
            f"on {self.short} (by up to {self.worst_short:.2e}); Fisher max diff {self.worst_fisher:.2e}; "
            f"whole-table function max diff {self.worst_table_fn:.2e}"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-n", type=int, default=30)
    parser.add_argument("--random", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    started = time.perf_counter()
    every = Tally()
    for n_b in range(1, args.max_n + 1):
        for n_c in range(1, args.max_n + 1):
            table = boschloo_table(n_b, n_c)
            for k_b in range(n_b + 1):
                for k_c in range(n_c + 1):
                    every.add(k_b, n_b, k_c, n_c, table)
        print(every.line(f"n_b <= {n_b}, n_c <= {args.max_n}"), flush=True)
    rng = np.random.default_rng(args.seed)
    sampled = Tally()
    for _ in range(args.random):
        n_b, n_c = (int(x) for x in rng.integers(1, 201, size=2))
        sampled.add(int(rng.integers(0, n_b + 1)), n_b, int(rng.integers(0, n_c + 1)), n_c, None)
    print(every.line(f"every table up to {args.max_n} x {args.max_n}"))
    print(sampled.line(f"{args.random} random tables up to 200 x 200 (seed {args.seed})"))
    print(f"{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
