"""judge/exact.py against scipy: hypergeometric tails, log-binomials, the stages' subsampling, and the
binomial and Poisson laws of the power and the thresholds' noise."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binom, hypergeom, poisson

from stabilitygate.judge import exact


@pytest.mark.parametrize(("n_b", "n_c"), [(1, 1), (5, 9), (20, 20), (100, 20), (100, 50)])
def test_the_drop_p_is_fishers_tail(n_b: int, n_c: int) -> None:
    for k_b in range(n_b + 1):
        row = exact.drop_p_row(k_b, n_b, n_c)
        for k_c in range(n_c + 1):
            expected = float(hypergeom.sf(k_b - 1, n_b + n_c, k_b + k_c, n_b))
            assert exact.drop_p(k_b, n_b, k_c, n_c) == pytest.approx(expected, abs=1e-12)
            assert row[k_c] == pytest.approx(expected, abs=1e-12)


def test_the_reference_value() -> None:
    # 10/10 against 6/10: given 16 of the 20 pooled, the baseline holds all 10 with chance 210/4845.
    assert exact.drop_p(10, 10, 6, 10) == pytest.approx(210 / 4845, abs=1e-15)
    assert exact.drop_p(0, 10, 0, 10) == 1.0 and exact.drop_p(3, 0, 1, 10) == 1.0


def test_large_runs_cost_no_big_integers() -> None:
    expected = float(hypergeom.sf(94_999, 100_050, 95_030, 100_000))
    assert exact.drop_p(95_000, 100_000, 30, 50) == pytest.approx(expected, rel=1e-9)


def test_log_comb_and_its_edges() -> None:
    for n, k in ((0, 0), (7, 3), (60, 30), (1000, 17)):
        assert float(exact.log_comb(n, k)) == pytest.approx(math.log(math.comb(n, k)), rel=1e-12, abs=1e-12)
    assert float(exact.log_comb(5, 6)) == -math.inf and float(exact.log_comb(5, -1)) == -math.inf


@pytest.mark.parametrize(("smaller", "larger"), [(0, 4), (5, 5), (10, 20), (20, 50)])
def test_subsampling_is_hypergeometric(smaller: int, larger: int) -> None:
    matrix = exact.subsample_matrix(smaller, larger)
    assert matrix.shape == (smaller + 1, larger + 1)
    assert np.allclose(matrix.sum(axis=0), 1.0)
    for y in range(larger + 1):
        expected = hypergeom.pmf(np.arange(smaller + 1), larger, y, smaller)
        assert np.allclose(matrix[:, y], expected, atol=1e-12)


@pytest.mark.parametrize(("n", "q"), [(0, 0.3), (1, 0.5), (20, 0.9), (200, 0.013), (7, 0.0), (7, 1.0)])
def test_the_binomial_is_scipys(n: int, q: float) -> None:
    assert np.allclose(exact.binomial_pmf(n, q), binom.pmf(np.arange(n + 1), n, q), rtol=1e-10, atol=1e-300)


@pytest.mark.parametrize(("mean", "most"), [(0.0, 5), (0.5, 10), (12.0, 40), (3000.0, 3500)])
def test_the_poisson_is_scipys(mean: float, most: int) -> None:
    assert np.allclose(exact.poisson_pmf(mean, most), poisson.pmf(np.arange(most + 1), mean), rtol=1e-9, atol=1e-300)
    if mean > 0:
        assert exact.log_poisson(mean, most) == pytest.approx(float(poisson.logpmf(most, mean)), rel=1e-12)


def test_the_hypergeometric_takes_many_draws_at_once() -> None:
    draws = np.arange(11)[None, :]
    table = exact.hypergeom_pmf(10, 4, draws, np.arange(5)[:, None])
    for drawn in range(11):
        assert np.allclose(table[:, drawn], hypergeom.pmf(np.arange(5), 10, 4, drawn), atol=1e-14)
