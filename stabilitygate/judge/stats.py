"""The two statistics the gate rests on: a one-sided exact test of a drop, and Holm's correction.

Boschloo's test (Fisher's p-value used as the statistic of an unconditional exact test) is
uniformly more powerful than Fisher's at the small N a CI budget allows, and still exact: it never
understates the chance of a false alarm. Holm keeps the chance that a run with no real change fails
anywhere at or below alpha, however many cases the suite has.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from stabilitygate.judge import exact

#: Boschloo's cost grows with (n1 + 1) * (n2 + 1) tables (200 per side: ~0.1 s). Past this size
#: Fisher's exact test is used: still exact (conservative), and at such N the two differ little.
BOSCHLOO_MAX_TABLES = 201 * 201

TestName = Literal["boschloo", "fisher"]


@dataclass(frozen=True)
class DropTest:
    p_value: float
    test: TestName


def drop_test(k_base: int, n_base: int, k_cur: int, n_cur: int) -> DropTest:
    """One-sided test of H1 "the current success rate is lower than the baseline's".

    k_base of n_base successes in the baseline run, k_cur of n_cur now; the runs are independent
    binomial experiments with their sizes fixed in advance.
    """
    for k, n in ((k_base, n_base), (k_cur, n_cur)):
        if n < 0 or k < 0 or k > n:
            raise ValueError(f"counts out of range: {k}/{n}")
    if (n_base + 1) * (n_cur + 1) > BOSCHLOO_MAX_TABLES:
        return DropTest(_fisher_greater(k_base, n_base, k_cur, n_cur), "fisher")
    return DropTest(_boschloo_greater(k_base, n_base, k_cur, n_cur), "boschloo")


def boschloo_one_sided(k_base: int, n_base: int, k_cur: int, n_cur: int) -> float:
    """Boschloo's one-sided p-value for "current rate < baseline rate" (exact at every size)."""
    return _boschloo_greater(k_base, n_base, k_cur, n_cur)


@lru_cache(maxsize=4096)
def _boschloo_greater(k_base: int, n_base: int, k_cur: int, n_cur: int) -> float:
    if _no_evidence(k_base, n_base, k_cur, n_cur):
        return 1.0
    return _clip(exact.boschloo_greater(k_base, n_base, k_cur, n_cur))


@lru_cache(maxsize=4096)
def _fisher_greater(k_base: int, n_base: int, k_cur: int, n_cur: int) -> float:
    if _no_evidence(k_base, n_base, k_cur, n_cur):
        return 1.0
    return _clip(exact.fisher_greater(k_base, n_base, k_cur, n_cur))


def _no_evidence(k_base: int, n_base: int, k_cur: int, n_cur: int) -> bool:
    """An empty run, or no variation at all (all successes or all failures): nothing to test."""
    successes = k_base + k_cur
    return n_base == 0 or n_cur == 0 or successes in (0, n_base + n_cur)


def _clip(p: float) -> float:
    if math.isnan(p):
        return 1.0
    return min(1.0, max(0.0, p))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given.

    Sorted ascending, the i-th smallest (0-based) of m is multiplied by (m - i); a running maximum
    keeps the adjusted values monotone in the raw ones; nothing exceeds 1.
    """
    m = len(p_values)
    order = sorted(range(m), key=lambda i: (p_values[i], i))
    adjusted = [1.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted
