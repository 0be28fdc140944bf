"""Exact one-sided tests of a drop in numpy: Fisher's hypergeometric tail and Boschloo's test.

Both answer "is the current success rate lower than the baseline's?" for k_b of n_b successes in
the baseline and k_c of n_c now (docs/design.md §6, "The drop test"). They agree with
`scipy.stats.hypergeom.sf` and `scipy.stats.boschloo_exact(..., alternative="greater")` to 1e-9
(tests/judge/test_exact.py), without making scipy a runtime dependency.

Fisher's p-values are computed from exact integers, so two tables with the same p-value (there are
many: the problem is symmetric) always tie, as Boschloo's ordering of the tables needs. Boschloo's
p-value is the largest, over the common success rate, of the probability of the tables whose
Fisher p is at most the observed one; the maximum is found on a grid and refined by golden-section
search around the best few grid points.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

Floats = NDArray[np.float64]

#: Tables whose Fisher p is within this relative distance of the observed one count as ties (as scipy).
TIE_TOLERANCE = 1e-13
_GRID = np.linspace(0.0, 1.0, 1025)[1:-1]  # the common rate; 0 and 1 give every non-trivial region 0
_CANDIDATES = 3  # local maxima of the grid refined per table
_GOLDEN_STEPS = 48  # shrinks the grid's bracket (2e-3) below 1e-12


def fisher_greater(k_base: int, n_base: int, k_cur: int, n_cur: int) -> float:
    """Fisher's one-sided p: given k_base + k_cur successes in all, P(baseline holds >= k_base of them)."""
    successes = k_base + k_cur
    low, high = max(0, successes - n_cur), min(n_base, successes)
    weights = [math.comb(n_base, x) * math.comb(n_cur, successes - x) for x in range(k_base, high + 1)]
    total = sum(math.comb(n_base, x) * math.comb(n_cur, successes - x) for x in range(low, high + 1))
    return sum(weights) / total  # int / int: correctly rounded


@lru_cache(maxsize=32)
def fisher_table(n_base: int, n_cur: int) -> tuple[Floats, Floats]:
    """Fisher's one-sided p of every table [k_b, k_c] of these sizes, and each table's weight.

    The weight C(n_b, k_b) C(n_c, k_c) / C(n_b + n_c, k_b + k_c) is the table's probability given
    its total of successes; times the binomial pmf of that total it is the table's probability.
    """
    n = n_base + n_cur
    p = np.ones((n_base + 1, n_cur + 1))
    w = np.zeros((n_base + 1, n_cur + 1))
    comb_b = [math.comb(n_base, x) for x in range(n_base + 1)]
    comb_c = [math.comb(n_cur, x) for x in range(n_cur + 1)]
    for s in range(n + 1):
        low, high = max(0, s - n_cur), min(n_base, s)
        total = math.comb(n, s)
        tail = 0
        for x in range(high, low - 1, -1):  # from the most baseline successes down
            term = comb_b[x] * comb_c[s - x]
            tail += term
            p[x, s - x] = tail / total
            w[x, s - x] = term / total
    p.setflags(write=False)
    w.setflags(write=False)
    return p, w


def boschloo_greater(k_base: int, n_base: int, k_cur: int, n_cur: int) -> float:
    """Boschloo's one-sided p-value for "current rate < baseline rate" (exact at every size)."""
    p, w = fisher_table(n_base, n_cur)
    region = p <= p[k_base, k_cur] * (1 + TIE_TOLERANCE)
    by_total = _by_total(np.where(region, w, 0.0)[None, :, :])
    return float(np.clip(_max_over_rate(by_total)[0], 0.0, 1.0))


@lru_cache(maxsize=32)
def boschloo_table(n_base: int, n_cur: int) -> Floats:
    """Boschloo's p-value of every table [k_b, k_c] of these sizes, at once (for power and simulations).

    Memory grows as (n_b + 1)(n_c + 1)(n_b + n_c + 1) floats: meant for sizes up to a few hundred.
    """
    p, w = fisher_table(n_base, n_cur)
    n = n_base + n_cur
    flat_p, flat_w = p.ravel(), w.ravel()
    order = np.argsort(flat_p, kind="stable")
    totals = (np.arange(n_base + 1)[:, None] + np.arange(n_cur + 1)[None, :]).ravel()
    # Row j holds the weights, by total of successes, of the j + 1 tables with the smallest Fisher p.
    cumulative = np.zeros((order.size, n + 1))
    cumulative[np.arange(order.size), totals[order]] = flat_w[order]
    np.cumsum(cumulative, axis=0, out=cumulative)
    sorted_p = flat_p[order]
    last_tie = np.searchsorted(sorted_p, sorted_p * (1 + TIE_TOLERANCE), side="right") - 1
    groups, row_of = np.unique(last_tie, return_inverse=True)
    best = _max_over_rate(cumulative[groups])[row_of]
    flat = np.empty(order.size)
    flat[order] = np.clip(best, 0.0, 1.0)
    table: Floats = flat.reshape(n_base + 1, n_cur + 1)
    table[0, 0] = table[n_base, n_cur] = 1.0  # no variation at all: nothing to test
    table.setflags(write=False)
    return table


def _by_total(weights: Floats) -> Floats:
    """(r, n_b + 1, n_c + 1) region weights -> (r, n_b + n_c + 1) summed by total of successes."""
    r, rows, cols = weights.shape
    out = np.zeros((r, rows + cols - 1))
    for x in range(rows):
        out[:, x : x + cols] += weights[:, x, :]
    return out


def _binomial_pmf(n: int, rates: Floats) -> Floats:
    """pmf of Binomial(n, rate) at 0..n for each rate: shape (len(rates), n + 1)."""
    s = np.arange(n + 1)
    log_comb = _log_comb(n)
    logs = log_comb[None, :] + s[None, :] * np.log(rates)[:, None] + (n - s)[None, :] * np.log1p(-rates)[:, None]
    result: Floats = np.exp(logs)
    return result


@lru_cache(maxsize=64)
def _log_comb(n: int) -> Floats:
    return np.array([math.lgamma(n + 1) - math.lgamma(s + 1) - math.lgamma(n - s + 1) for s in range(n + 1)])


def _max_over_rate(by_total: Floats) -> Floats:
    """max over the rate of sum_s a[s] pmf(s; n, rate), for each row a of `by_total`."""
    n = by_total.shape[1] - 1
    values = by_total @ _binomial_pmf(n, _GRID).T  # (rows, grid)
    starts = _candidate_peaks(values)
    step = _GRID[1] - _GRID[0]
    low = np.clip(_GRID[starts] - step, 1e-300, 1.0)
    high = np.clip(_GRID[starts] + step, 0.0, 1.0 - 1e-16)
    rows = np.repeat(np.arange(by_total.shape[0]), starts.shape[1]).reshape(starts.shape)
    refined = _golden_max(by_total[rows.ravel()], low.ravel(), high.ravel()).reshape(starts.shape)
    result: Floats = np.maximum(refined.max(axis=1), values.max(axis=1))
    return result


def _candidate_peaks(values: Floats) -> NDArray[np.intp]:
    """Grid indices of each row's best local maxima (the best one repeated when there are fewer)."""
    padded = np.pad(values, ((0, 0), (1, 1)), constant_values=-np.inf)
    is_peak = (values >= padded[:, :-2]) & (values >= padded[:, 2:])
    ranked = np.where(is_peak, values, -np.inf)
    top = np.argsort(-ranked, axis=1, kind="stable")[:, :_CANDIDATES]
    best = top[:, :1]
    valid = np.take_along_axis(is_peak, top, axis=1)
    chosen: NDArray[np.intp] = np.where(valid, top, best)
    return chosen


def _golden_max(by_total: Floats, low: Floats, high: Floats) -> Floats:
    """Golden-section search for the maximum of each row's function inside its bracket."""
    n = by_total.shape[1] - 1
    s = np.arange(n + 1)
    log_comb = _log_comb(n)

    def value(rate: Floats) -> Floats:
        logs = log_comb[None, :] + s[None, :] * np.log(rate)[:, None] + (n - s)[None, :] * np.log1p(-rate)[:, None]
        total: Floats = np.einsum("ij,ij->i", by_total, np.exp(logs))
        return total

    ratio = (math.sqrt(5) - 1) / 2
    a, b = low.copy(), high.copy()
    c, d = b - ratio * (b - a), a + ratio * (b - a)
    fc, fd = value(c), value(d)
    for _ in range(_GOLDEN_STEPS):
        left = fc >= fd  # the maximum lies in [a, d]
        b = np.where(left, d, b)
        a = np.where(left, a, c)
        new = np.where(left, b - ratio * (b - a), a + ratio * (b - a))
        f_new = value(new)
        c, d, fc, fd = (
            np.where(left, new, d),
            np.where(left, c, new),
            np.where(left, f_new, fd),
            np.where(left, fc, f_new),
        )
    result: Floats = np.maximum(fc, fd)
    return result
