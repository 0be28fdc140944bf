"""The adaptive design: the look, the stop rule, and a false-alarm rate held across the stages."""

from __future__ import annotations

import math

import pytest

from stabilitygate.judge.stages import (
    FIRST_STAGE_WEIGHT,
    FUTILITY_P,
    StageDesign,
    after_first_stage,
    combined_p,
    combined_p_min,
    look_says_unchanged,
)
from stabilitygate.judge.stats import drop_test


def test_a_design_without_a_second_stage_changes_nothing() -> None:
    design = StageDesign(20, 20)
    assert not design.adaptive and design.look is None and design.weight == 1.0
    assert combined_p(design, 0.003, None) == 0.003
    assert combined_p_min(design, 1e-4, 1e-6) == 1e-4
    assert design.stage_of(20) == "first"


def test_the_stages_of_the_default_design() -> None:
    design = StageDesign(20, 40)
    assert design.look == 10
    assert [design.stage_of(n) for n in (10, 11, 20, 21, 40)] == ["look", "first", "first", "second", "second"]
    assert StageDesign(8, 16).look is None  # too few samples to look at half of them


def test_combined_p_splits_the_level() -> None:
    design = StageDesign(20, 40)
    assert combined_p(design, 0.003, None) == pytest.approx(0.003 / FIRST_STAGE_WEIGHT)
    assert combined_p(design, 0.5, 0.007) == pytest.approx(0.007 / (1 - FIRST_STAGE_WEIGHT))
    assert combined_p(design, 0.9, 0.9) == 1.0


def test_the_look_needs_every_sample_to_agree_with_the_baseline() -> None:
    assert look_says_unchanged(["A"] * 10, "A", 10)
    assert not look_says_unchanged(["A"] * 9 + ["B"], "A", 10)
    assert not look_says_unchanged(["A"] * 9 + [None], "A", 10)  # a failed sample is not agreement
    assert not look_says_unchanged(["A"] * 9, "A", 10)  # not all drawn yet
    assert look_says_unchanged([1.0] * 5, 1, 5)  # answers compare as values


def test_only_inconclusive_cases_go_on() -> None:
    assert after_first_stage([0.05, 0.9], rejected=False, decided=False) == "more"
    assert after_first_stage([FUTILITY_P + 0.01, 0.9], rejected=False, decided=False) == "stop"
    assert after_first_stage([0.05], rejected=True, decided=False) == "stop"
    assert after_first_stage([0.05], rejected=False, decided=True) == "stop"
    assert after_first_stage([], rejected=False, decided=False) == "stop"


def pmf(k: int, n: int, q: float) -> float:
    return math.comb(n, k) * q**k * (1 - q) ** (n - k)


@pytest.mark.parametrize("level", [0.05, 0.01])
def test_the_two_stage_false_alarm_rate_is_at_most_the_level_exactly(level: float) -> None:
    """Exact size of "combined p < level" over every path of a small design, at every common rate."""
    n_b, design = 12, StageDesign(10, 20)
    look, first, last = 5, 10, 20
    worst = 0.0
    for q in [i / 40 for i in range(1, 40)]:
        size = 0.0
        for k_b in range(n_b + 1):
            for x1 in range(first + 1):
                p1 = drop_test(k_b, n_b, x1, first).p_value
                # P(first-stage count x1, not unanimous at the look)
                reach = pmf(x1, first, q) - (q**look * pmf(x1 - look, first - look, q) if x1 >= look else 0.0)
                if combined_p(design, p1, None) < level:
                    size += pmf(k_b, n_b, q) * reach
                elif after_first_stage([p1], rejected=False, decided=False) == "more":
                    for y in range(last - first + 1):
                        p2 = drop_test(k_b, n_b, x1 + y, last).p_value
                        if combined_p(design, p1, p2) < level:
                            size += pmf(k_b, n_b, q) * reach * pmf(y, last - first, q)
        worst = max(worst, size)
    print(f"level {level}: worst size over the rates {worst:.5f}")
    assert worst <= level
