"""Tarone-Holm: tests that can never be significant at their counts do not dilute the others."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stabilitygate.judge.discrete import FamilyTest, first_level, step_down, tarone_k
from stabilitygate.judge.family import drop_p_min
from stabilitygate.judge.stats import drop_test, holm

ALPHA = 0.05


def test_a_baseline_at_the_floor_cannot_reach_alpha() -> None:
    # Free text whose 20 baseline completions all differ: mode share 1/20. Nothing now can be lower.
    assert drop_p_min(1, 20, 20) > ALPHA
    assert drop_p_min(20, 20, 20) < 1e-6  # a stable baseline can show a drop


def test_floor_cases_do_not_dilute_the_one_that_dropped() -> None:
    """One case drops 20/20 -> 15/20 (p = 0.011); nine free-text cases sit at the floor (1/20)."""
    dropped = drop_test(20, 20, 15, 20).p_value
    floors = [drop_test(1, 20, 1, 20).p_value] * 9
    raw = [dropped, *floors]
    # Plain Holm counts all ten: 0.11, not significant.
    assert holm(raw)[0] == pytest.approx(10 * dropped)
    assert holm(raw)[0] > ALPHA
    # Tarone-Holm counts only the test that can reach alpha: the drop is caught at its raw p.
    tests = [FamilyTest(dropped, drop_p_min(20, 20, 20))] + [FamilyTest(p, drop_p_min(1, 20, 20)) for p in floors]
    decisions = step_down(tests, ALPHA)
    assert decisions[0].rejected and decisions[0].counted == 1
    assert decisions[0].p_adjusted == pytest.approx(dropped)
    assert not any(d.rejected for d in decisions[1:])


def test_tarone_k_by_hand() -> None:
    # k = 1: three reach below 0.05 (> 1); k = 2: three below 0.025 (> 2); k = 3: two below 0.0167.
    p_mins = [0.001, 0.01, 0.02, 0.3]
    assert tarone_k(p_mins, ALPHA) == 3
    assert first_level(p_mins, ALPHA) == pytest.approx(ALPHA / 3)
    assert tarone_k([], ALPHA) == 1
    assert tarone_k([1.0, 1.0], ALPHA) == 1


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=25))
def test_with_every_test_able_to_reach_alpha_it_is_holm(raw: list[float]) -> None:
    decisions = step_down([FamilyTest(p, 0.0) for p in raw], ALPHA)
    assert [d.p_adjusted for d in decisions] == pytest.approx(holm(raw))
    assert [d.rejected for d in decisions] == [p < ALPHA for p in holm(raw)]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.floats(0.0, 1.0), st.floats(0.0, 1.0)), min_size=1, max_size=25))
def test_never_rejects_less_than_holm(pairs: list[tuple[float, float]]) -> None:
    tests = [FamilyTest(max(p, m), m) for p, m in pairs]  # a p-value is never below its minimum
    tarone = step_down(tests, ALPHA)
    plain = holm([t.p_value for t in tests])
    for decision, holm_p in zip(tarone, plain, strict=True):
        assert decision.p_adjusted <= holm_p + 1e-12
        assert decision.rejected or holm_p >= ALPHA


def test_false_alarms_stay_below_alpha_with_floor_cases() -> None:
    """Seeded: ten unchanged cases, five stable (0.95) and five scattered (agreement near the floor),
    baselines and pull requests drawn afresh; the share of runs failing anywhere stays <= alpha."""
    rng = np.random.default_rng(20261201)
    runs, n, alarms = 2000, 20, 0
    rates = [0.95] * 5 + [0.08] * 5
    for _ in range(runs):
        tests = []
        for rate in rates:
            k_b = max(1, int(rng.binomial(n, rate)))  # a mode share is at least 1 / n
            k_c = max(1, int(rng.binomial(n, rate)))
            tests.append(FamilyTest(drop_test(k_b, n, k_c, n).p_value, drop_p_min(k_b, n, n)))
        alarms += any(d.rejected for d in step_down(tests, ALPHA))
    share = alarms / runs
    print(f"false alarms {alarms}/{runs} = {share:.4f}")
    assert share <= ALPHA
