"""Hypergeometric arithmetic in numpy: the exact null distributions the judge's tests are built from,
and the binomial and Poisson laws the power and the thresholds' noise are computed with.

Under the null (the pull request answers like the baseline), the answers of both runs pooled are
fixed and every way of splitting them into a baseline of n_b and a run of n_c is equally likely
(docs/design.md §6, "The case's test"). How many of one answer fall into the baseline is then
hypergeometric. Everything is computed in log space from log-factorials, so counts of 100,000 samples
(the most a suite may draw) cost no big integers; scipy is a test dependency only.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

Floats = NDArray[np.float64]
Ints = NDArray[np.int64]


@lru_cache(maxsize=8)
def _log_factorials(n: int) -> Floats:
    table = np.array([math.lgamma(k + 1) for k in range(n + 1)])
    table.setflags(write=False)
    return table


def log_factorials(n: int) -> Floats:
    """ln(k!) for k = 0..n (read-only); one table serves every smaller n."""
    size = 1 << max(8, (n + 1).bit_length())  # round up, so that nearby sizes share a table
    return _log_factorials(size)


def log_comb(n: int | Ints, k: int | Ints) -> Floats:
    """ln C(n, k) elementwise; -inf where k < 0 or k > n."""
    n_arr, k_arr = np.asarray(n, dtype=np.int64), np.asarray(k, dtype=np.int64)
    table = log_factorials(int(n_arr.max(initial=0)))
    valid = (k_arr >= 0) & (k_arr <= n_arr)
    safe_k, safe_n = np.where(valid, k_arr, 0), np.where(valid, n_arr, 0)
    out: Floats = np.where(valid, table[safe_n] - table[safe_k] - table[safe_n - safe_k], -np.inf)
    return out


def hypergeom_pmf(total: int, marked: int, drawn: int | Ints, k: int | Ints) -> Floats:
    """P(k marked among `drawn` taken without replacement from `total` holding `marked`), elementwise."""
    ks, draws = np.asarray(k, dtype=np.int64), np.asarray(drawn, dtype=np.int64)
    logs = log_comb(marked, ks) + log_comb(total - marked, draws - ks) - log_comb(total, draws)
    result: Floats = np.exp(logs)
    return result


def binomial_pmf(n: int, q: float) -> Floats:
    """P(X = k) for k = 0..n, X ~ Binomial(n, q)."""
    k = np.arange(n + 1)
    if q <= 0.0 or q >= 1.0:
        point: Floats = (k == (0 if q <= 0.0 else n)).astype(float)
        return point
    result: Floats = np.exp(log_comb(n, k) + k * np.log(q) + (n - k) * np.log1p(-q))
    return result


def poisson_pmf(mean: float, most: int) -> Floats:
    """P(Y = y) for y = 0..most, Y ~ Poisson(mean)."""
    y = np.arange(most + 1)
    if mean <= 0:
        point: Floats = (y == 0).astype(float)
        return point
    values: Floats = np.exp(y * math.log(mean) - mean - log_factorials(most)[: most + 1])
    return values


def log_poisson(mean: float, y: int) -> float:
    """ln P(Y = y), Y ~ Poisson(mean > 0)."""
    return y * math.log(mean) - mean - float(log_factorials(y)[y])


@lru_cache(maxsize=256)
def _drop_p_row(k_base: int, n_base: int, n_cur: int) -> Floats:
    out = np.array([_drop_p(k_base, n_base, x, n_cur) for x in range(n_cur + 1)])
    out.setflags(write=False)
    return out


def _drop_p(k_base: int, n_base: int, k_cur: int, n_cur: int) -> float:
    s = k_base + k_cur  # the answer's pooled count
    low, high = max(0, s - n_cur), min(n_base, s)
    ks = np.arange(low, high + 1)
    pmf = hypergeom_pmf(n_base + n_cur, s, n_base, ks)
    return min(1.0, float(pmf[ks >= k_base].sum() / pmf.sum()))


def drop_p(k_base: int, n_base: int, k_cur: int, n_cur: int) -> float:
    """One-sided p of "this answer is rarer now": given its pooled count, P(the baseline holds at
    least k_base of it), Fisher's exact test. 1.0 for an empty run."""
    if n_base <= 0 or n_cur <= 0:
        return 1.0
    return _drop_p(k_base, n_base, k_cur, n_cur)


def drop_p_row(k_base: int, n_base: int, n_cur: int) -> Floats:
    """`drop_p` for every current count 0..n_cur at once (read-only)."""
    if n_base <= 0 or n_cur <= 0:
        return np.ones(n_cur + 1)
    return _drop_p_row(k_base, n_base, n_cur)


def subsample_matrix(smaller: int, larger: int) -> Floats:
    """M[x, y] = P(x of an answer among the first `smaller` of `larger` samples | y among all of them),
    the samples' order being uniform (the hypergeometric chain of the stages, judge/stages.py)."""
    return _subsample_matrix(smaller, larger)


@lru_cache(maxsize=256)
def _subsample_matrix(smaller: int, larger: int) -> Floats:
    # The first `smaller` samples are the marked ones, the y holding the answer the ones drawn.
    matrix = hypergeom_pmf(larger, smaller, np.arange(larger + 1)[None, :], np.arange(smaller + 1)[:, None])
    matrix.setflags(write=False)
    return matrix
