"""judge/exact.py against scipy: Boschloo's one-sided test and Fisher's tail, table by table.

bench/bench_exact_parity.py runs the same comparison on every table up to 30 x 30.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from scipy.stats import boschloo_exact, hypergeom

from stabilitygate.judge import exact

TOLERANCE = 1e-9


def scipy_boschloo(k_b: int, n_b: int, k_c: int, n_c: int) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(boschloo_exact([[k_b, k_c], [n_b - k_b, n_c - k_c]], alternative="greater").pvalue)


def dense_maximum(k_b: int, n_b: int, k_c: int, n_c: int) -> float:
    """The maximum over 200,001 rates of the probability of the observed region, by brute force."""
    p, w = exact.fisher_table(n_b, n_c)
    region = p <= p[k_b, k_c] * (1 + exact.TIE_TOLERANCE)
    rates = np.linspace(1e-6, 1 - 1e-6, 200_001)
    best = 0.0
    by_total = exact._by_total(np.where(region, w, 0.0)[None, :, :])
    for chunk in np.array_split(rates, 20):
        best = max(best, float((by_total @ exact._binomial_pmf(n_b + n_c, chunk).T).max()))
    return best


def assert_agrees(k_b: int, n_b: int, k_c: int, n_c: int) -> None:
    ours, theirs = exact.boschloo_greater(k_b, n_b, k_c, n_c), scipy_boschloo(k_b, n_b, k_c, n_c)
    if abs(ours - theirs) <= TOLERANCE:
        return
    # scipy's optimizer can stop short of the maximum (seen only at p > 0.9999): ours must then be
    # the true maximum, never above it.
    assert ours > theirs, (k_b, n_b, k_c, n_c, ours, theirs)
    assert ours <= dense_maximum(k_b, n_b, k_c, n_c) + 1e-12


def non_trivial(n_b: int, n_c: int) -> list[tuple[int, int]]:
    return [(a, b) for a in range(n_b + 1) for b in range(n_c + 1) if a + b not in (0, n_b + n_c)]


@pytest.mark.parametrize(("n_b", "n_c"), list(itertools.product(range(1, 7), repeat=2)))
def test_every_small_table_agrees_with_scipy(n_b: int, n_c: int) -> None:
    for k_b, k_c in non_trivial(n_b, n_c):
        assert_agrees(k_b, n_b, k_c, n_c)


@pytest.mark.parametrize(("n_b", "n_c"), [(20, 20), (30, 7), (10, 30)])
def test_every_table_of_ci_sizes_agrees_with_scipy(n_b: int, n_c: int) -> None:
    for k_b, k_c in non_trivial(n_b, n_c):
        assert_agrees(k_b, n_b, k_c, n_c)


def test_random_tables_up_to_200_agree_with_scipy() -> None:
    rng = np.random.default_rng(20261201)
    for _ in range(12):
        n_b, n_c = (int(x) for x in rng.integers(1, 201, size=2))
        k_b, k_c = int(rng.integers(0, n_b + 1)), int(rng.integers(0, n_c + 1))
        if k_b + k_c not in (0, n_b + n_c):
            assert_agrees(k_b, n_b, k_c, n_c)


def test_the_reference_value_is_exact() -> None:
    # 10/10 against 6/10: the supremum sits at rate 0.5, where the region's probability is 22120 / 2^20.
    assert exact.boschloo_greater(10, 10, 6, 10) == pytest.approx(22120 / 2**20, abs=1e-15)


@pytest.mark.parametrize(("n_b", "n_c"), [(1, 1), (5, 9), (20, 20), (100, 20)])
def test_fisher_tail_agrees_with_scipy(n_b: int, n_c: int) -> None:
    p, _ = exact.fisher_table(n_b, n_c)
    for k_b in range(n_b + 1):
        for k_c in range(n_c + 1):
            expected = float(hypergeom.sf(k_b - 1, n_b + n_c, k_b + k_c, n_b))
            assert exact.fisher_greater(k_b, n_b, k_c, n_c) == pytest.approx(expected, abs=1e-12)
            assert p[k_b, k_c] == pytest.approx(expected, abs=1e-12)


def test_fisher_tail_of_large_runs() -> None:
    expected = float(hypergeom.sf(949, 2000, 1850, 1000))
    assert exact.fisher_greater(950, 1000, 900, 1000) == pytest.approx(expected, rel=1e-12)


def test_symmetric_tables_tie_exactly() -> None:
    # Swapping successes and failures and the two runs gives the same one-sided p: those tables
    # must tie exactly, or Boschloo's region would depend on rounding.
    p, _ = exact.fisher_table(20, 20)
    for x1, x2 in non_trivial(20, 20):
        assert p[x1, x2] == p[20 - x2, 20 - x1]


@pytest.mark.parametrize(("n_b", "n_c"), [(3, 4), (20, 20), (60, 20), (100, 40)])
def test_the_whole_table_matches_one_table_at_a_time(n_b: int, n_c: int) -> None:
    table = exact.boschloo_table(n_b, n_c)
    cells = non_trivial(n_b, n_c)
    if len(cells) > 300:
        picks = np.random.default_rng(3).choice(len(cells), 300, replace=False)
        cells = [cells[i] for i in picks]
    for k_b, k_c in cells:
        assert table[k_b, k_c] == pytest.approx(exact.boschloo_greater(k_b, n_b, k_c, n_c), abs=1e-12)
    assert table[0, 0] == table[n_b, n_c] == 1.0
