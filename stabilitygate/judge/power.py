"""What a case can see: the exact power of its test, the smallest drop it catches, what it will cost.

The model (docs/design.md §6, "Power you can read"): the baseline held k_b of n_b samples giving its
modal answer, and each sample of the pull request gives that answer with a fixed chance q (the rest
give no answer that could be a mode). Under this model the case's test (judge/case_test.py) is a
function of the run's count y of that answer, rejecting exactly the counts up to a limit; the power is
a sum over the run's paths through the checks (judge/stages.py), each path's chance a product of
binomials, computed exactly, never simulated.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from stabilitygate.judge.case_test import case_test
from stabilitygate.judge.exact import Floats, binomial_pmf, drop_p, drop_p_row
from stabilitygate.judge.pool import Pool
from stabilitygate.judge.stages import CasePath, StageDesign
from stabilitygate.judge.thresholds import EPSILON

TARGET_POWER = 0.8
#: The most samples `samples_for_power` looks at: beyond, the plan says "more than".
MOST_SAMPLES = 10_000


@lru_cache(maxsize=1024)
def last_stage_p_values(k_base: int, n_base: int, design: StageDesign) -> Floats:
    """The case's p-value at its last stage for each count y = 0..last of the baseline's answer."""
    n = design.last
    path = CasePath(design, n, design.checks)  # the model has no failed samples
    survival = path.survival(n_base, n)
    values = [
        case_test(Pool((k_base,), (y,), failures=(n_base - k_base, n - y)), ("drop",), survival).p_value
        for y in range(n + 1)
    ]
    out = np.array(values)
    out.setflags(write=False)
    return out


def rejected_counts(k_base: int, n_base: int, design: StageDesign, level: float, min_drop: float) -> Floats:
    """1.0 for each count y at the last stage that the case's test rejects (p < level, drop >= min_drop)."""
    y = np.arange(design.last + 1)
    dropped = k_base / n_base - y / design.last >= min_drop - EPSILON
    result: Floats = ((last_stage_p_values(k_base, n_base, design) < level) & dropped).astype(float)
    return result


@dataclass(frozen=True)
class Paths:
    """A run's paths through the checks at rate q: where it stops, and its count if it never does."""

    stopped: tuple[float, ...]  # P(stopping at each check)
    final: Floats  # P(passing every check with y of the answer at the last stage), y = 0..last


def paths(k_base: int, n_base: int, design: StageDesign, q: float) -> Paths:
    """Forward over the checks: P(x of the answer so far, not stopped yet) at each."""
    alive = np.ones(1)
    drawn = 0
    stopped = []
    for check in design.checks:
        alive = np.convolve(alive, binomial_pmf(check - drawn, q))
        passes = drop_p_row(k_base, n_base, check) <= design.stop_p(check)
        stopped.append(float(alive[~passes].sum()))
        alive, drawn = alive * passes, check
    return Paths(tuple(stopped), np.convolve(alive, binomial_pmf(design.last - drawn, q)))


def power(k_base: int, n_base: int, design: StageDesign, q: float, level: float, min_drop: float) -> float:
    """P(the case is failed by its test) when each sample gives the baseline's answer with chance q."""
    if n_base <= 0:
        return 0.0
    if not design.adaptive:
        limit = fixed_limit(k_base, n_base, design.first, level, min_drop)
        return 0.0 if limit < 0 else float(binomial_pmf(design.first, q)[: limit + 1].sum())
    final = paths(k_base, n_base, design, q).final
    return float(final @ rejected_counts(k_base, n_base, design, level, min_drop))


@lru_cache(maxsize=8192)
def fixed_limit(k_base: int, n_base: int, n: int, level: float, min_drop: float) -> int:
    """One fixed stage of n: the largest count the test rejects (-1: none). Its p-value (Fisher's,
    the case's test under the model) grows with the count, so the rejected counts are 0..limit."""

    def rejected(y: int) -> bool:
        return k_base / n_base - y / n >= min_drop - EPSILON and drop_p(k_base, n_base, y, n) < level

    if not rejected(0):
        return -1
    low, high = 0, n  # rejected(low) holds
    if rejected(high):
        return high
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if rejected(middle) else (low, middle)
    return low


def expected_requests(k_base: int, n_base: int, design: StageDesign, q: float) -> float:
    """The samples the case draws on average at rate q (q = the baseline's rate: an unchanged case)."""
    run = paths(k_base, n_base, design, q)
    return float(sum(c * p for c, p in zip(design.checks, run.stopped, strict=True)) + design.last * run.final.sum())


@lru_cache(maxsize=4096)
def detectable_drop(
    k_base: int, n_base: int, design: StageDesign, level: float, min_drop: float, target: float = TARGET_POWER
) -> float | None:
    """The smallest drop from k_base/n_base the case catches with `target` power at `level`; None when
    even a fall to 0 is caught less often (the case cannot see a drop at all)."""
    if n_base <= 0 or power(k_base, n_base, design, 0.0, level, min_drop) < target:
        return None
    before = k_base / n_base
    low, high = 0.0, before  # caught with the target power at rate `low`, not at `high`
    for _ in range(40):
        middle = (low + high) / 2
        if power(k_base, n_base, design, middle, level, min_drop) >= target:
            low = middle
        else:
            high = middle
    return before - low


@lru_cache(maxsize=1024)
def samples_for_power(
    k_base: int, n_base: int, level: float, min_drop: float, target: float = TARGET_POWER
) -> int | None:
    """The fewest pull-request samples (one fixed stage) at which a fall of `min_drop` from
    k_base/n_base is significant with `target` power at `level`; None when MOST_SAMPLES do not. (The
    min_drop bar itself is left out: a true fall of exactly min_drop shows as one only half the time.)"""
    q = k_base / n_base - min_drop if n_base else -1.0
    if q < 0.0:
        return None

    def enough(n: int) -> bool:
        return power(k_base, n_base, StageDesign(n, n), q, level, 0.0) >= target

    high = 2
    while not enough(high):
        if high >= MOST_SAMPLES:
            return None
        high = min(2 * high, MOST_SAMPLES)
    low = high // 2
    while high - low > 1:  # power grows with n (up to the test's discreteness): the least n that is enough
        middle = (low + high) // 2
        low, high = (low, middle) if enough(middle) else (middle, high)
    return high
