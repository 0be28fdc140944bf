"""The adaptive design: where cases are checked, when they stop, and an exact size across the stages."""

from __future__ import annotations

import pytest

from stabilitygate.judge.exact import binomial_pmf
from stabilitygate.judge.power import power
from stabilitygate.judge.stages import CHECK_STOP_P, LOOK_STOP_P, StageDesign, design_for, goes_on, path_of


def test_a_design_without_a_second_stage_has_no_checks() -> None:
    design = StageDesign(20, 20)
    assert not design.adaptive and design.checks == () and design.look is None
    assert design.next_size(0) == 20 and design.stage_of(20) == "first"


@pytest.mark.parametrize(
    ("first", "last", "can_look", "checks"),
    [
        (20, 50, True, (10, 20, 30, 40)),  # the default: every half of `samples`
        (10, 25, True, (5, 10, 15, 20)),
        (8, 20, True, (8, 12, 16)),  # half of 8 is too few to look at
        (20, 50, False, (20, 30, 40)),  # absolute thresholds: judged on all of `samples` first
        (21, 45, True, (10, 21, 31, 41)),
    ],
)
def test_the_checks(first: int, last: int, can_look: bool, checks: tuple[int, ...]) -> None:
    design = StageDesign(first, last, can_look)
    assert design.checks == checks
    assert design.stop_p(checks[0]) == (LOOK_STOP_P if checks[0] < first else CHECK_STOP_P)
    assert [design.next_size(c) for c in checks] == [*checks[1:], last]


def test_the_stages_a_case_ended_in() -> None:
    design = StageDesign(20, 50)
    assert [design.stage_of(n) for n in (10, 20, 30, 50)] == ["look", "first", "second", "second"]


def test_a_case_stops_when_its_baseline_answer_is_clearly_as_common_now() -> None:
    design = StageDesign(20, 50)
    assert not goes_on(design, 10, 95, 100, 10, 10)  # unanimous at the look: p = 1
    assert goes_on(design, 10, 95, 100, 9, 10)  # 9 of 10: p = 0.44, below the look's 0.5
    assert not goes_on(design, 10, 90, 100, 9, 10)  # against 90/100: p = 0.67
    assert goes_on(design, 20, 95, 100, 17, 20) and not goes_on(design, 20, 95, 100, 19, 20)


def test_a_path_is_read_from_the_samples() -> None:
    design = StageDesign(20, 50)
    samples = [(i, i != 3) for i in range(30)]  # 30 drawn, sample 3 failed
    path = path_of(design, samples)
    assert path.drawn == 30 and path.ok_at_checks == (9, 19) and not path.tested and path.stage == "second"
    assert path_of(design, [(i, True) for i in range(50)]).tested
    assert path_of(StageDesign(20, 20), [(i, True) for i in range(20)]).tested


@pytest.mark.parametrize("level", [0.05, 0.01])
def test_the_staged_false_alarm_rate_is_at_most_the_level_exactly(level: float) -> None:
    """Exact size of "tested and p < level" over every path of a small design (baseline 12, samples
    10, up to 20: checks at 5, 10 and 15), at every common rate, the baseline's draw included."""
    n_b, design = 12, StageDesign(10, 20)
    worst = 0.0
    for q in [i / 40 for i in range(1, 40)]:
        weights = binomial_pmf(n_b, q)
        size = sum(w * power(k, n_b, design, q, level, 0.0) for k, w in enumerate(weights))
        worst = max(worst, float(size))
    print(f"level {level}: worst size over the rates {worst:.5f}")
    assert worst <= level


def test_a_second_stage_needs_a_baseline_of_twice_max_samples() -> None:
    from tests.judge.comparison_cases import case

    twenty = case(True).model_copy(update={"samples": 20})  # max_samples: the default, 50
    assert design_for(twenty, 100).adaptive and design_for(twenty, 100).last == 50
    assert not design_for(twenty, 99).adaptive and not design_for(twenty, None).adaptive
    assert not design_for(twenty.model_copy(update={"max_samples": 20}), 1000).adaptive  # turned off
