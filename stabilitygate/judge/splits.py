"""Every split of a case's pooled answers into a baseline and a run, with its chance under the null.

Under the null each split is as likely as the number of ways to draw it (multivariate hypergeometric).
Where the splits are few (at most ENUMERATE, counted before any is built) they are all enumerated and
the test is exact; otherwise DRAWS splits are drawn at random, seeded from the pooled counts alone
(never from which run holds what, so the draws are the same for every split of the same pool), with
the observed split among them, as a permutation test does (docs/design.md §6, "The case's test").
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from stabilitygate.judge.exact import Floats, Ints, log_comb

ENUMERATE = 100_000  # splits enumerated exactly; beyond, drawn
DRAWS = 20_000


@dataclass(frozen=True)
class Splits:
    """Splits as rows of the baseline's count per class, each with its probability under the null."""

    baseline: Ints  # (splits, classes)
    weight: Floats  # (splits,), summing to 1
    observed: int  # the row of the split that was drawn
    exact: bool  # every split enumerated (else drawn)


def splits_of(pooled: Sequence[int], observed: Sequence[int], n_baseline: int, *, draws: int = DRAWS) -> Splits:
    """Every split of `pooled` with n_baseline samples in the baseline (or `draws` of them)."""
    pooled_arr = np.asarray(pooled, dtype=np.int64)
    n_current = int(pooled_arr.sum()) - n_baseline
    low = np.maximum(0, pooled_arr - n_current)
    high = np.minimum(pooled_arr, n_baseline)
    if _count(low, high) <= ENUMERATE:
        return _enumerated(pooled_arr, low, high, n_baseline, observed)
    return _drawn(pooled_arr, n_baseline, observed, draws)


def _count(low: Ints, high: Ints) -> float:
    """How many rows the enumeration builds at most: the ranges of every class but the widest."""
    sizes = sorted(int(h - lo + 1) for lo, h in zip(low, high, strict=True))
    return float(math.prod(sizes[:-1])) if sizes else 1.0


def _enumerated(pooled: Ints, low: Ints, high: Ints, n_baseline: int, observed: Sequence[int]) -> Splits:
    widest = int(np.argmax(high - low))
    rows = np.zeros((1, pooled.size), dtype=np.int64)
    for i in range(pooled.size):
        if i == widest:
            continue
        values = np.arange(low[i], high[i] + 1)
        rows = np.repeat(rows, values.size, axis=0)
        rows[:, i] = np.tile(values, rows.shape[0] // values.size)
        rows = rows[rows.sum(axis=1) <= n_baseline]
    rows[:, widest] = n_baseline - rows.sum(axis=1)
    rows = rows[(rows[:, widest] >= low[widest]) & (rows[:, widest] <= high[widest])]
    logs = log_comb(pooled[None, :], rows).sum(axis=1) - log_comb(int(pooled.sum()), n_baseline)
    weight = np.exp(logs)
    weight /= weight.sum()
    match = np.flatnonzero((rows == np.asarray(observed)[None, :]).all(axis=1))
    return Splits(rows, weight, int(match[0]), exact=True)


def _drawn(pooled: Ints, n_baseline: int, observed: Sequence[int], draws: int) -> Splits:
    rng = np.random.default_rng(_seed(pooled, n_baseline, draws))
    drawn = rng.multivariate_hypergeometric(pooled, n_baseline, size=draws, method="marginals")
    rows = np.vstack([np.asarray(observed, dtype=np.int64)[None, :], drawn.astype(np.int64)])
    return Splits(rows, np.full(rows.shape[0], 1.0 / rows.shape[0]), 0, exact=False)


def _seed(pooled: Ints, n_baseline: int, draws: int) -> int:
    digest = hashlib.sha256(pooled.tobytes() + f"|{n_baseline}|{draws}".encode()).digest()
    return int.from_bytes(digest[:8], "little")
