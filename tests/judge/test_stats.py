"""The one-sided Boschloo test and Holm's step-down correction."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binom, fisher_exact

from stabilitygate.judge import stats
from stabilitygate.judge.stats import boschloo_one_sided, drop_test, holm


def brute_force_boschloo(k1: int, n1: int, k2: int, n2: int) -> float:
    """Boschloo from its definition: Fisher's one-sided p as the statistic, sup over the common rate."""

    def fisher(a: int, b: int) -> float:
        return float(fisher_exact([[a, b], [n1 - a, n2 - b]], alternative="greater").pvalue)

    observed = fisher(k1, k2)
    region = [(a, b) for a in range(n1 + 1) for b in range(n2 + 1) if fisher(a, b) <= observed * (1 + 1e-9)]
    rates = np.linspace(0.0, 1.0, 4_001)
    total = np.zeros_like(rates)
    for a, b in region:
        total += binom.pmf(a, n1, rates) * binom.pmf(b, n2, rates)
    return float(total.max())


def test_ten_of_ten_against_six_of_ten() -> None:
    p = boschloo_one_sided(10, 10, 6, 10)
    fisher = fisher_exact([[10, 6], [0, 4]], alternative="greater").pvalue
    # 0.0211 is exact (22120 / 2**20, the supremum sits at rate 0.5). 0.017 is what scipy returns
    # for the transposed table, which models the wrong experiment.
    assert p == pytest.approx(22120 / 2**20, abs=1e-9)
    assert p == pytest.approx(0.0211, abs=5e-5)
    assert fisher == pytest.approx(0.0433, abs=5e-5)
    assert p < fisher


@pytest.mark.parametrize(
    ("k1", "n1", "k2", "n2"),
    [(10, 10, 6, 10), (9, 10, 5, 10), (18, 20, 10, 20), (20, 20, 17, 20), (7, 12, 2, 9), (5, 8, 5, 8)],
)
def test_matches_the_definition(k1: int, n1: int, k2: int, n2: int) -> None:
    assert boschloo_one_sided(k1, n1, k2, n2) == pytest.approx(brute_force_boschloo(k1, n1, k2, n2), abs=2e-4)


def test_one_sided_a_rise_is_never_significant() -> None:
    assert boschloo_one_sided(6, 10, 10, 10) == 1.0
    assert boschloo_one_sided(5, 10, 6, 10) > 0.5
    assert boschloo_one_sided(10, 10, 9, 10) == pytest.approx(0.4119, abs=1e-3)


def test_no_variation_or_empty_runs_give_one() -> None:
    assert drop_test(10, 10, 10, 10).p_value == 1.0
    assert drop_test(0, 10, 0, 10).p_value == 1.0
    assert drop_test(0, 0, 3, 10).p_value == 1.0
    with pytest.raises(ValueError):
        drop_test(11, 10, 3, 10)


def test_large_runs_fall_back_to_fisher() -> None:
    result = drop_test(950, 1000, 900, 1000)
    assert result.test == "fisher"
    expected = fisher_exact([[950, 900], [50, 100]], alternative="greater").pvalue
    assert result.p_value == pytest.approx(expected, rel=1e-9)
    assert drop_test(18, 20, 10, 20).test == "boschloo"


def test_deterministic_across_calls() -> None:
    first = boschloo_one_sided(17, 20, 11, 20)
    stats._boschloo_greater.cache_clear()  # computed afresh, not served from the cache
    assert boschloo_one_sided(17, 20, 11, 20) == first


@settings(max_examples=25, deadline=None)
@given(n1=st.integers(2, 12), n2=st.integers(2, 12), data=st.data())
def test_boschloo_is_never_less_powerful_than_fisher(n1: int, n2: int, data: st.DataObject) -> None:
    k1 = data.draw(st.integers(0, n1))
    k2 = data.draw(st.integers(0, n2))
    fisher = fisher_exact([[k1, k2], [n1 - k1, n2 - k2]], alternative="greater").pvalue
    assert boschloo_one_sided(k1, n1, k2, n2) <= fisher + 1e-9


def test_holm_step_down_by_hand() -> None:
    raw = [0.01, 0.04, 0.03, 0.005]
    # sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 = 0.02, 0.03, 0.06, 0.04 -> monotone: 0.06 for the last
    assert holm(raw) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.0211, 1.0]) == pytest.approx([0.0422, 1.0])
    assert holm([0.5, 0.6]) == pytest.approx([1.0, 1.0])
    assert holm([]) == []


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=30))
def test_holm_properties(raw: list[float]) -> None:
    adjusted = holm(raw)
    assert all(r <= a + 1e-15 <= 1.0 + 1e-15 for r, a in zip(raw, adjusted, strict=True))
    # monotone: a smaller raw p never gets a larger adjusted p
    for i in range(len(raw)):
        for j in range(len(raw)):
            if raw[i] < raw[j]:
                assert adjusted[i] <= adjusted[j]
    # the smallest is multiplied by the family size, capped at 1
    smallest = min(range(len(raw)), key=lambda i: raw[i])
    assert adjusted[smallest] == pytest.approx(min(1.0, raw[smallest] * len(raw)))
