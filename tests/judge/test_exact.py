"""judge/exact.py against scipy: hypergeometric tails, log-binomials and the stages' subsampling."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import hypergeom

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
