"""Exact power, the detectable drop, the samples a drop needs and the requests a case costs, checked
against brute-force enumeration of the run's paths through its checks."""

from __future__ import annotations

import math

import pytest

from stabilitygate.judge.case_test import case_test
from stabilitygate.judge.exact import drop_p
from stabilitygate.judge.pool import Pool
from stabilitygate.judge.power import (
    TARGET_POWER,
    detectable_drop,
    expected_requests,
    fixed_limit,
    power,
    samples_for_power,
)
from stabilitygate.judge.stages import CasePath, StageDesign, goes_on
from tests.support.benches import load_bench

LEVEL, MIN_DROP = 0.005, 0.10


def pmf(k: int, n: int, q: float) -> float:
    return math.comb(n, k) * q**k * (1 - q) ** (n - k)


def test_fixed_power_is_the_sum_over_the_rejected_counts() -> None:
    def rejected(k: int) -> bool:
        return 0.95 - k / 20 >= MIN_DROP - 1e-9 and drop_p(95, 100, k, 20) < LEVEL

    limit = fixed_limit(95, 100, 20, LEVEL, MIN_DROP)
    assert all(rejected(k) for k in range(limit + 1)) and not rejected(limit + 1)
    brute = sum(pmf(k, 20, 0.6) for k in range(21) if rejected(k))
    assert power(95, 100, StageDesign(20, 20), 0.6, LEVEL, MIN_DROP) == pytest.approx(brute, abs=1e-12)
    assert fixed_limit(1, 20, 20, LEVEL, MIN_DROP) == -1  # at the floor nothing is rejected


def test_staged_power_and_requests_match_enumerating_every_path() -> None:
    """Checks after 5 and 10 samples, the last stage at 15: every (count per segment) path."""
    k_b, n_b, q, level = 18, 20, 0.5, 0.05
    design = StageDesign(10, 15)
    assert design.checks == (5, 10)
    survival = CasePath(design, 15, (5, 10)).survival(n_b, 15)
    brute_power = brute_requests = 0.0
    for a in range(6):
        for b in range(6):
            for c in range(6):
                chance = pmf(a, 5, q) * pmf(b, 5, q) * pmf(c, 5, q)
                if not goes_on(design, 5, k_b, n_b, a, 5):
                    brute_requests += 5 * chance
                elif not goes_on(design, 10, k_b, n_b, a + b, 10):
                    brute_requests += 10 * chance
                else:
                    brute_requests += 15 * chance
                    y = a + b + c
                    p = case_test(Pool((k_b,), (y,), failures=(n_b - k_b, 15 - y)), ("drop",), survival).p_value
                    if p < level and k_b / n_b - y / 15 >= MIN_DROP - 1e-9:
                        brute_power += chance
    assert power(k_b, n_b, design, q, level, MIN_DROP) == pytest.approx(brute_power, abs=1e-12)
    assert expected_requests(k_b, n_b, design, q) == pytest.approx(brute_requests, abs=1e-12)


def test_the_detectable_drop_is_caught_with_the_target_power() -> None:
    design = StageDesign(20, 50)
    drop = detectable_drop(95, 100, design, LEVEL, MIN_DROP)
    assert drop is not None and 0.1 < drop < 0.4
    assert power(95, 100, design, 0.95 - drop, LEVEL, MIN_DROP) == pytest.approx(TARGET_POWER, abs=1e-6)
    fixed = detectable_drop(19, 20, StageDesign(20, 20), LEVEL, MIN_DROP)
    assert fixed is not None and fixed > drop  # a bigger baseline and more samples see smaller drops
    assert detectable_drop(1, 20, StageDesign(20, 20), LEVEL, MIN_DROP) is None  # the floor sees none


def test_the_samples_a_drop_of_min_drop_needs() -> None:
    n = samples_for_power(95, 100, LEVEL, MIN_DROP)
    assert n is not None
    q = 0.95 - MIN_DROP
    assert power(95, 100, StageDesign(n, n), q, LEVEL, 0.0) >= TARGET_POWER
    assert power(95, 100, StageDesign(n - 1, n - 1), q, LEVEL, 0.0) < TARGET_POWER
    assert samples_for_power(50, 100, LEVEL, MIN_DROP) is None  # a baseline of 100 at 0.5 is too noisy


def test_power_over_both_runs_of_the_issue_scenario() -> None:
    # docs/design.md's table: 0.95 -> 0.60, at alpha / 10, one stage of 20 against a baseline of 100.
    power_over_baselines = load_bench("bench_power").power_over_baselines
    assert power_over_baselines(100, StageDesign(20, 20), 0.95, 0.60, LEVEL, MIN_DROP) == pytest.approx(0.855, abs=1e-3)
