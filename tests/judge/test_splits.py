"""Every split of a pooled count, with its chance under the null: enumerated, or drawn when too many."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from stabilitygate.judge import splits


def test_small_pools_are_enumerated_with_their_hypergeometric_weights() -> None:
    pooled, n_b = (5, 3, 2), 4
    found = splits.splits_of(pooled, (2, 1, 1), n_b)
    assert found.exact and found.weight.sum() == pytest.approx(1.0)
    total = math.comb(sum(pooled), n_b)
    expected = {
        row: math.prod(math.comb(p, b) for p, b in zip(pooled, row, strict=True)) / total
        for row in itertools.product(*(range(p + 1) for p in pooled))
        if sum(row) == n_b
    }
    got = {tuple(int(v) for v in row): float(w) for row, w in zip(found.baseline, found.weight, strict=True)}
    assert got.keys() == expected.keys()
    assert all(got[row] == pytest.approx(expected[row], abs=1e-14) for row in expected)
    assert tuple(found.baseline[found.observed]) == (2, 1, 1)


def test_a_run_smaller_than_a_class_bounds_its_share() -> None:
    found = splits.splits_of((10, 1), (9, 1), 10)  # 11 pooled, 1 in the run: the baseline holds 9 or 10 of the 10
    assert sorted(int(b) for b in found.baseline[:, 0]) == [9, 10]


def test_big_pools_are_drawn_seeded_by_the_pool_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(splits, "ENUMERATE", 10)
    pooled, n_b = (30, 20, 10, 5, 5), 40
    one = splits.splits_of(pooled, (20, 10, 5, 3, 2), n_b, draws=500)
    other = splits.splits_of(pooled, (18, 12, 6, 2, 2), n_b, draws=500)  # another split of the same pool
    assert not one.exact and one.baseline.shape == (501, 5) and one.observed == 0
    assert tuple(one.baseline[0]) == (20, 10, 5, 3, 2) and tuple(other.baseline[0]) == (18, 12, 6, 2, 2)
    assert np.array_equal(one.baseline[1:], other.baseline[1:])  # the same draws whatever was observed
    assert (one.baseline.sum(axis=1) == n_b).all() and np.allclose(one.weight, 1 / 501)
