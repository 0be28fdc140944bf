"""What a case can see: the exact power of its drop test and the smallest drop it catches.

Computed from the test's rejection region, never simulated: with the baseline's k_b of n_b fixed,
the drop test rejects exactly when the current count is at most some limit (its p-value grows with
the current count), so its power against a current rate q is a binomial tail. Under the adaptive
design (judge/stages.py) the power adds the second stage's region, convolved exactly. The model:
each current sample gives the baseline's most common answer with probability q, so the primary
agreement is that count (docs/design.md §6, "Power").
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache

import numpy as np

from stabilitygate.judge.exact import boschloo_table
from stabilitygate.judge.stages import FUTILITY_P, StageDesign
from stabilitygate.judge.stats import BOSCHLOO_MAX_TABLES, drop_test
from stabilitygate.judge.thresholds import EPSILON

TARGET_POWER = 0.8


#: Sizes whose whole Boschloo table (judge/exact.py) costs at most this many floats are read from it:
#: one table serves every baseline count, where one p-value at a time would take one search each.
TABLE_FLOATS = 4_000_000


@lru_cache(maxsize=4096)
def rejection_limit(k_base: int, n_base: int, n_cur: int, level: float, min_drop: float) -> int | None:
    """The largest current count the drop test rejects at `level` (p < level and a drop of at least
    min_drop); None when no count is rejected."""
    if n_base <= 0 or n_cur <= 0:
        return None
    p_of = _p_values(k_base, n_base, n_cur)

    def rejected(k: int) -> bool:
        return k_base / n_base - k / n_cur >= min_drop - EPSILON and p_of(k) < level

    if not rejected(0):
        return None
    low, high = 0, n_cur  # rejected(low) holds; find the last k that is rejected
    if rejected(high):
        return high
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if rejected(middle) else (low, middle)
    return low


def _p_values(k_base: int, n_base: int, n_cur: int) -> Callable[[int], float]:
    """The drop test's p-value against k_base/n_base for each current count."""
    if (n_base + 1) * (n_cur + 1) * (n_base + n_cur + 1) <= TABLE_FLOATS:
        row = boschloo_table(n_base, n_cur)[k_base]  # tables without variation hold 1.0, as drop_test gives
        return lambda k: float(row[k])
    return lambda k: drop_test(k_base, n_base, k, n_cur).p_value


def binomial_pmf(n: int, q: float) -> np.ndarray:
    """P(X = k) for k = 0..n, X ~ Binomial(n, q)."""
    k = np.arange(n + 1)
    if q <= 0.0 or q >= 1.0:
        point: np.ndarray = (k == (0 if q <= 0.0 else n)).astype(float)
        return point
    log_comb = np.array([math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) for i in range(n + 1)])
    result: np.ndarray = np.exp(log_comb + k * math.log(q) + (n - k) * math.log1p(-q))
    return result


def power_fixed(k_base: int, n_base: int, n_cur: int, rate: float, level: float, min_drop: float) -> float:
    """P(the drop test rejects) when the current rate is `rate`, with n_cur samples now."""
    limit = rejection_limit(k_base, n_base, n_cur, level, min_drop)
    return 0.0 if limit is None else float(binomial_pmf(n_cur, rate)[: limit + 1].sum())


def power_staged(k_base: int, n_base: int, design: StageDesign, rate: float, level: float, min_drop: float) -> float:
    """P(the case is failed by its drop test) under the adaptive design, exactly."""
    if not design.adaptive:
        return power_fixed(k_base, n_base, design.first, rate, level, min_drop)
    n1, n2, w = design.first, design.last, design.weight
    limit1 = rejection_limit(k_base, n_base, n1, level * w, min_drop)
    limit2 = rejection_limit(k_base, n_base, n2, level * (1 - w), min_drop)
    go_on = _futility_limit(k_base, n_base, n1)  # first-stage counts at most this are inconclusive
    first = _first_stage_counts(design, rate)
    power = 0.0 if limit1 is None else float(first[: limit1 + 1].sum())
    if limit2 is None:
        return power
    rest = np.cumsum(binomial_pmf(n2 - n1, rate))  # P(second-stage count <= j)
    for x1 in range((limit1 if limit1 is not None else -1) + 1, min(go_on, n1) + 1):
        room = limit2 - x1
        if room >= 0:
            power += float(first[x1]) * float(rest[min(room, n2 - n1)])
    return power


def _first_stage_counts(design: StageDesign, rate: float) -> np.ndarray:
    """P(first-stage count = x and the case was not stopped at the look) for x = 0..first."""
    counts = binomial_pmf(design.first, rate)
    look = design.look
    if look is None:
        return counts
    stopped = np.zeros_like(counts)
    stopped[look:] = rate**look * binomial_pmf(design.first - look, rate)
    result: np.ndarray = counts - stopped
    return result


@lru_cache(maxsize=4096)
def _futility_limit(k_base: int, n_base: int, n_cur: int) -> int:
    """The largest first-stage count whose p-value is still at most FUTILITY_P (-1: none)."""
    p_of = _p_values(k_base, n_base, n_cur)
    k = -1
    while k + 1 <= n_cur and p_of(k + 1) <= FUTILITY_P:
        k += 1
    return k


@lru_cache(maxsize=4096)
def detectable_drop(
    k_base: int, n_base: int, design: StageDesign, level: float, min_drop: float, power: float = TARGET_POWER
) -> float | None:
    """The smallest drop from k_base/n_base the case catches with `power`, at `level`; None when even
    a fall to 0 would be caught less often (the case cannot see a drop at all)."""
    before = k_base / n_base if n_base else 0.0
    if n_base <= 0 or power_staged(k_base, n_base, design, 0.0, level, min_drop) < power:
        return None
    low, high = 0.0, before  # caught with `power` at rate `low`, not at `high` (or high is the baseline)
    for _ in range(40):
        middle = (low + high) / 2
        if power_staged(k_base, n_base, design, middle, level, min_drop) >= power:
            low = middle
        else:
            high = middle
    return before - low


def power_unconditional(
    n_base: int, n_cur: int, rate_base: float, rate_cur: float, level: float, min_drop: float
) -> float:
    """P(the drop test rejects) over both runs' draws: baseline at rate_base, current at rate_cur."""
    if (n_base + 1) * (n_cur + 1) > BOSCHLOO_MAX_TABLES:
        raise ValueError("the exact power table is computed for Boschloo's sizes only")
    p = boschloo_table(n_base, n_cur)
    k_b = np.arange(n_base + 1)[:, None]
    k_c = np.arange(n_cur + 1)[None, :]
    region = (p < level) & (k_b / n_base - k_c / n_cur >= min_drop - EPSILON)
    weights = binomial_pmf(n_base, rate_base)[:, None] * binomial_pmf(n_cur, rate_cur)[None, :]
    return float((weights * region).sum())
