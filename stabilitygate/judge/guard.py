"""The guard of the answer-change and meaning-drift rules: is the baseline's modal answer rarer now?

The baseline's modal answer (or meaning) is chosen as the most common one of the baseline run, so its
baseline count is biased upwards: comparing it with its count now as if it had been named in advance
(a plain two-sample test) cries wolf. With no real change, a case answering 50/50 flipped "significantly"
in 7.6% of runs at alpha 0.05 and N = 20. This test is a permutation test instead: conditional on the
answers of both runs pooled, every way of splitting them into a baseline of n_b and a run of n_c is
equally likely when nothing changed, and the statistic picks the baseline's modal answer afresh in each
split, so the selection is part of the null distribution (docs/design.md §6, "The guard").

Statistic: the baseline's modal share in the baseline minus that answer's share now. The p-value is
(1 + splits at least as extreme) / (1 + splits drawn) over seeded random splits (valid at every size:
it never understates the chance of a false alarm), and exact enumeration is not needed. The seed comes
from the counts, so the same runs always give the same p-value.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

DRAWS = 20_000  # splits drawn first; a p-value this small is refined with more
REFINED_DRAWS = 400_000
_REFINE_BELOW = 50 / DRAWS
_TOLERANCE = 1e-12


@dataclass(frozen=True)
class Categories:
    """Answers (or meanings) of both runs, aligned: counts[i] of category i in each run.

    Category 0 is the baseline's modal answer. Samples whose answer is not known (parse failures, or
    the baseline's completions beyond the ones it keeps) are categories of one sample each.
    """

    baseline: tuple[int, ...]
    current: tuple[int, ...]

    @property
    def n_baseline(self) -> int:
        return sum(self.baseline)

    @property
    def n_current(self) -> int:
        return sum(self.current)


def aligned(baseline: Sequence[int], current: Sequence[int], unknown_baseline: int, unknown_current: int) -> Categories:
    """Categories from known counts (same index = same answer; baseline's modal first) plus singletons."""
    if len(baseline) != len(current):
        raise ValueError("aligned counts need one entry per answer in each run")
    singles_b = (1,) * unknown_baseline + (0,) * unknown_current
    singles_c = (0,) * unknown_baseline + (1,) * unknown_current
    return Categories(tuple(baseline) + singles_b, tuple(current) + singles_c)


def testable(categories: Categories) -> bool:
    """Whether the runs pooled hold two answers or more: with one, every split looks the same."""
    pooled = [b + c for b, c in zip(categories.baseline, categories.current, strict=True)]
    return categories.n_baseline > 0 and categories.n_current > 0 and sum(1 for n in pooled if n) >= 2


def rarer_now_p(categories: Categories) -> float:
    """One-sided p-value of "the baseline's modal answer is rarer now" (1.0 when nothing can be tested)."""
    b = np.asarray(categories.baseline, dtype=np.int64)
    c = np.asarray(categories.current, dtype=np.int64)
    n_b, n_c = int(b.sum()), int(c.sum())
    if n_b == 0 or n_c == 0 or b.size == 0:
        return 1.0
    observed = b[0] / n_b - c[0] / n_c
    if observed <= 0:
        return 1.0
    pooled = b + c
    if not testable(categories):
        return 1.0
    rng = np.random.default_rng(_seed(b, c))
    p = _tail(pooled, n_b, n_c, observed, DRAWS, rng)
    if p < _REFINE_BELOW:
        p = _tail(pooled, n_b, n_c, observed, REFINED_DRAWS, rng)
    return p


def _tail(pooled: np.ndarray, n_b: int, n_c: int, observed: float, draws: int, rng: np.random.Generator) -> float:
    splits = rng.multivariate_hypergeometric(pooled, n_b, size=draws, method="marginals")
    modal = splits.argmax(axis=1)  # the baseline's modal answer of each split (ties: the first)
    rows = np.arange(draws)
    in_baseline = splits[rows, modal]
    now = pooled[modal] - in_baseline
    statistic = in_baseline / n_b - now / n_c
    extreme = int(np.count_nonzero(statistic >= observed - _TOLERANCE))
    return (1 + extreme) / (1 + draws)


def _seed(b: np.ndarray, c: np.ndarray) -> int:
    digest = hashlib.sha256(b.tobytes() + b"|" + c.tobytes()).digest()
    return int.from_bytes(digest[:8], "little")
