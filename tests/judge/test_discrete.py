"""The exact discrete step-down across cases (judge/discrete.py): alpha spent on what can happen."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stabilitygate.judge.case_test import case_test
from stabilitygate.judge.discrete import FamilyTest, bonferroni_level, chance_of_least, step_down
from stabilitygate.judge.pool import Pool

ALPHA = 0.05


def test_a_case_whose_runs_hold_one_answer_takes_no_share_of_alpha() -> None:
    stable = case_test(Pool((20,), (20,)), ("drop", "answer"))
    assert stable.p_value == 1.0 and stable.support == (1.0,)
    dropped = case_test(Pool((20,), (15,), failures=(0, 5)), ("drop", "answer"))
    family = step_down([FamilyTest(dropped.p_value, dropped.support)] + [FamilyTest(1.0, (1.0,))] * 9)
    assert family.adjusted(0) == pytest.approx(dropped.p_value)  # the nine stable cases cost nothing


def test_the_adjusted_p_value_is_the_exact_chance_of_so_small_a_least_p_value() -> None:
    # Two cases whose p-values can only be 0.01, 0.3 or 1 and 0.02, 1: P(least <= 0.01) = 0.01.
    a, b = FamilyTest(0.01, (0.01, 0.3, 1.0)), FamilyTest(0.02, (0.02, 1.0))
    family = step_down([a, b])
    assert family.adjusted(0) == pytest.approx(0.01)  # b cannot reach 0.01: it takes nothing at that step
    assert family.adjusted(1) == pytest.approx(0.02)  # then b alone
    assert chance_of_least([a, b], 0.02) == pytest.approx(1 - 0.99 * 0.98)


def test_the_step_down_is_monotone_and_a_rules_p_adjusts_at_least_to_its_cases() -> None:
    rng = np.random.default_rng(5)
    tests = [FamilyTest(float(p), tuple(sorted({float(p), 0.5, 1.0}))) for p in rng.uniform(0, 0.2, 8)]
    family = step_down(tests)
    adjusted = [family.adjusted(i) for i in range(len(tests))]
    by_p = sorted(range(len(tests)), key=lambda i: tests[i].p_value)
    assert all(adjusted[i] <= adjusted[j] for i, j in itertools.pairwise(by_p))
    assert all(family.adjusted(i, tests[i].p_value * 2) >= adjusted[i] for i in range(len(tests)))


def test_the_reach_of_a_test_is_its_null_cdf() -> None:
    t = FamilyTest(0.2, (0.01, 0.2, 1.0))
    assert [t.reach(u) for u in (0.005, 0.01, 0.1, 0.2, 0.99, 1.0)] == [0.0, 0.01, 0.01, 0.2, 0.2, 1.0]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(1e-6, 1.0), min_size=1, max_size=12))
def test_never_more_than_bonferroni_and_holm_when_every_value_is_reachable(raw: list[float]) -> None:
    """Continuous p-values (every value reachable): the exact step-down is Sidak's, at most Holm's."""
    tests = [FamilyTest(p, tuple(sorted({p, *np.linspace(0.0, 1.0, 101)[1:]}))) for p in raw]
    family = step_down(tests)
    order = sorted(range(len(raw)), key=lambda i: (raw[i], i))
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(raw) - rank) * raw[i]))
        assert family.adjusted(i) <= running + 1e-12


def test_a_case_of_ten_is_held_at_least_to_alpha_over_ten() -> None:
    assert bonferroni_level(ALPHA, 10) == pytest.approx(0.005)
    tests = [FamilyTest(0.005, (0.005, 1.0))] + [FamilyTest(0.5, (0.005, 0.5, 1.0))] * 9
    assert step_down(tests).adjusted(0) == pytest.approx(1 - 0.995**10) and ALPHA > 1 - 0.995**10
