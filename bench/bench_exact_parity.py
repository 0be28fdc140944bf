"""The judge's exact arithmetic against independent references, table by table.

1. `judge/exact.py`'s drop p (Fisher's one-sided tail, in log space) against `scipy.stats.hypergeom`,
   for every table up to `--max-n` samples per run, then 200 random tables up to 2,000 x 200.
2. `judge/case_test.py`'s exact test (min-p over the drop, answer and parsed-share rules, every split
   of the pooled answers enumerated by class) against brute force over every assignment of the
   labeled samples, on random small pools.
3. With checks (judge/stages.py): a case's p-value against brute force over every order of its
   run's samples, on a small design.

Run: .venv/bin/python bench/bench_exact_parity.py [--max-n 40] [--pools 60] [--seed 3]
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
from scipy.stats import hypergeom

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from stabilitygate.judge.case_test import case_test
from stabilitygate.judge.exact import drop_p
from stabilitygate.judge.pool import Pool
from stabilitygate.judge.stages import CasePath, StageDesign, goes_on

FAIL = None


def worst_drop_p(max_n: int, rng: np.random.Generator) -> tuple[float, int]:
    worst, tables = 0.0, 0
    sizes = [(n_b, n_c) for n_b in range(1, max_n + 1) for n_c in range(1, max_n + 1)]
    sizes += [(int(rng.integers(1, 2001)), int(rng.integers(1, 201))) for _ in range(200)]
    for n_b, n_c in sizes:
        picks = [(k, x) for k in range(n_b + 1) for x in range(n_c + 1)]
        if len(picks) > 400:
            picks = [picks[i] for i in rng.choice(len(picks), 400, replace=False)]
        for k_b, k_c in picks:
            reference = float(hypergeom.sf(k_b - 1, n_b + n_c, k_b + k_c, n_b))
            worst = max(worst, abs(drop_p(k_b, n_b, k_c, n_c) - reference))
            tables += 1
    return worst, tables


def brute_force(baseline: list[str | None], current: list[str | None]) -> float:
    """min-p over drop, guard and parsed share, every assignment of the labeled samples enumerated."""
    pooled = baseline + current
    n_b, n_c = len(baseline), len(current)
    real = {x for x, n in Counter(pooled).items() if x is not FAIL and n >= 2}

    def mode(run: list[str | None]) -> int:
        return max(Counter(x for x in run if x is not FAIL).values(), default=0)

    def stats(b: list[str | None], c: list[str | None]) -> tuple[float, float, float]:
        counts = Counter(x for x in b if x is not FAIL)
        top = max(counts.values(), default=0)
        tied = sorted(x for x, n in counts.items() if n == top)
        modal = next((x for x in tied if x in real), tied[0] if tied else None)
        now = sum(1 for x in c if x == modal) if modal is not None else 0
        return mode(b) / n_b - mode(c) / n_c, top / n_b - now / n_c, c.count(FAIL) / n_c - b.count(FAIL) / n_b

    rows = []
    for chosen in itertools.combinations(range(len(pooled)), n_b):
        inside = set(chosen)
        rows.append(stats([pooled[i] for i in chosen], [pooled[i] for i in range(len(pooled)) if i not in inside]))
    values = np.array(rows)
    tails = np.array([[np.mean(values[:, j] >= row[j] - 1e-12) for j in range(3)] for row in values])
    least = tails.min(axis=1)
    return float(np.mean(least <= least[0] * (1 + 1e-12)))  # the first assignment is the observed one


def as_pool(baseline: list[str | None], current: list[str | None]) -> Pool:
    pooled = Counter(x for x in baseline + current if x is not FAIL)
    real = sorted(x for x, n in pooled.items() if n >= 2)
    singles = (sum(1 for x in baseline if x is not FAIL and x not in real),
               sum(1 for x in current if x is not FAIL and x not in real))  # fmt: skip
    return Pool(tuple(baseline.count(x) for x in real), tuple(current.count(x) for x in real), singles,
                (baseline.count(FAIL), current.count(FAIL)))  # fmt: skip


def worst_case_test(pools: int, rng: np.random.Generator) -> float:
    labels = ["A", "B", "C", "x", "y", FAIL]
    worst = 0.0
    for _ in range(pools):
        n_b, n_c = int(rng.integers(2, 8)), int(rng.integers(2, 9))
        draw = lambda n: [labels[i] for i in rng.choice(len(labels), n, p=[0.4, 0.2, 0.1, 0.1, 0.1, 0.1])]  # noqa: E731
        baseline, current = draw(n_b), draw(n_c)
        ours = case_test(as_pool(baseline, current), ("drop", "answer", "parsed")).p_value
        worst = max(worst, abs(ours - brute_force(baseline, current)))
    return worst


def worst_staged() -> float:
    """Checks after 5 and 10 of 15: every order of the run's samples, every baseline count."""
    n_b, design, worst = 4, StageDesign(10, 15), 0.0
    for k_b in range(n_b + 1):
        for y in range(16):
            s = k_b + y
            weights = {}
            for b in range(max(0, s - 15), min(n_b, s) + 1):
                passed = sum(
                    all(goes_on(design, c, b, n_b, sum(1 for p in places if p < c), c) for c in design.checks)
                    for places in itertools.combinations(range(15), s - b)
                )
                weights[b] = math.comb(n_b, b) * passed / math.comb(n_b + 15, s)
            total = sum(weights.values())
            if total == 0 or weights.get(k_b, 0) == 0:
                continue
            expected = sum(w for b, w in weights.items() if b >= k_b) / total
            path = CasePath(design, 15, design.checks)
            pool = Pool((k_b,), (y,), failures=(n_b - k_b, 15 - y)) if s >= 2 else None
            if pool is None:
                continue
            ours = case_test(pool, ("drop",), path.survival(n_b, 15)).p_value
            worst = max(worst, abs(ours - expected))
    return worst


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--max-n", type=int, default=40)
    parser.add_argument("--pools", type=int, default=60)
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    worst, tables = worst_drop_p(args.max_n, rng)
    print(f"drop p against scipy's hypergeometric tail: {tables:,} tables, worst difference {worst:.1e}")
    pools = worst_case_test(args.pools, rng)
    print(f"the case's exact test against brute force: {args.pools} random pools, worst {pools:.1e}")
    print(f"with checks, against every order of the run: worst {worst_staged():.1e}")
    print(f"({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
