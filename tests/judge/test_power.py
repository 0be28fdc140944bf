"""Exact power and the smallest detectable drop, checked against brute-force enumeration."""

from __future__ import annotations

import math

import pytest

from stabilitygate.judge.power import (
    TARGET_POWER,
    detectable_drop,
    power_fixed,
    power_staged,
    power_unconditional,
    rejection_limit,
)
from stabilitygate.judge.stages import FIRST_STAGE_WEIGHT, FUTILITY_P, StageDesign
from stabilitygate.judge.stats import drop_test

LEVEL, MIN_DROP = 0.005, 0.10


def pmf(k: int, n: int, q: float) -> float:
    return math.comb(n, k) * q**k * (1 - q) ** (n - k)


def rejects(k_b: int, n_b: int, k: int, n: int, level: float) -> bool:
    return k_b / n_b - k / n >= MIN_DROP - 1e-9 and drop_test(k_b, n_b, k, n).p_value < level


def test_the_rejection_limit_is_the_last_rejected_count() -> None:
    limit = rejection_limit(95, 100, 20, LEVEL, MIN_DROP)
    assert limit is not None
    assert rejects(95, 100, limit, 20, LEVEL) and not rejects(95, 100, limit + 1, 20, LEVEL)
    assert all(rejects(95, 100, k, 20, LEVEL) for k in range(limit + 1))
    assert rejection_limit(1, 20, 20, LEVEL, MIN_DROP) is None  # at the floor nothing is rejected


def test_fixed_power_is_the_sum_over_the_rejection_region() -> None:
    brute = sum(pmf(k, 20, 0.6) for k in range(21) if rejects(95, 100, k, 20, LEVEL))
    assert power_fixed(95, 100, 20, 0.6, LEVEL, MIN_DROP) == pytest.approx(brute, abs=1e-12)


def test_staged_power_matches_enumerating_every_path() -> None:
    """look 5, first 10, last 20: every (look count, first-stage count, second-stage count)."""
    k_b, n_b, q = 18, 20, 0.55
    design = StageDesign(10, 20)
    assert design.look == 5
    w = FIRST_STAGE_WEIGHT
    brute = 0.0
    for a in range(6):  # successes among the first 5
        for b in range(6):  # among samples 5..9
            for c in range(11):  # among 10..19
                prob = pmf(a, 5, q) * pmf(b, 5, q) * pmf(c, 10, q)
                if a == 5:
                    continue  # unanimous at the look: stops, never fails
                x1 = a + b
                first = rejects(k_b, n_b, x1, 10, LEVEL * w)
                goes_on = not first and drop_test(k_b, n_b, x1, 10).p_value <= FUTILITY_P
                if first or (goes_on and rejects(k_b, n_b, x1 + c, 20, LEVEL * (1 - w))):
                    brute += prob
    assert power_staged(k_b, n_b, design, q, LEVEL, MIN_DROP) == pytest.approx(brute, abs=1e-12)


def test_the_detectable_drop_is_caught_with_the_target_power() -> None:
    design = StageDesign(20, 40)
    drop = detectable_drop(95, 100, design, LEVEL, MIN_DROP)
    assert drop is not None and 0.1 < drop < 0.4
    assert power_staged(95, 100, design, 0.95 - drop, LEVEL, MIN_DROP) == pytest.approx(TARGET_POWER, abs=1e-6)
    # A bigger baseline sees smaller drops; a baseline at the floor sees none.
    fixed = detectable_drop(19, 20, StageDesign(20, 20), LEVEL, MIN_DROP)
    assert fixed is not None and fixed > drop
    assert detectable_drop(1, 20, StageDesign(20, 20), LEVEL, MIN_DROP) is None


def test_unconditional_power_of_the_issue_scenario() -> None:
    # docs/design.md's power table: 0.95 -> 0.60 at alpha / 10, baseline 100 against 20 now.
    assert power_unconditional(100, 20, 0.95, 0.60, LEVEL, MIN_DROP) == pytest.approx(0.893, abs=5e-4)
    assert power_unconditional(20, 20, 0.95, 0.60, LEVEL, MIN_DROP) == pytest.approx(0.588, abs=5e-4)
