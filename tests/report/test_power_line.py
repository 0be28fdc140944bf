"""The comment's sentence on what a compared case can see."""

from __future__ import annotations

from typing import Any

from stabilitygate.against_baseline import Compared, NotCompared
from stabilitygate.report.power_line import power_line
from tests.support.typed import typed

COMPARED = {
    "status": "compared",
    "hash": "h",
    "baseline_k": 95,
    "baseline_n": 100,
    "n": 20,
    "detectable_drop": 0.316459,
    "power_level": 0.005,
    "stages": {"samples": 20, "max_samples": 20, "look": None},
    "suite_baseline_samples": 100,
}


def compared(data: dict[str, Any]) -> Compared:
    return typed(Compared, data)


def test_the_detectable_drop_with_its_sizes_and_level() -> None:
    assert power_line(compared(COMPARED)) == (
        "Detectable drop: 0.32 in agreement, caught 80% of the time (baseline 95/100, 20 samples now; level 0.005)"
    )


def test_a_second_stage_and_a_baseline_of_other_sizes_are_told() -> None:
    line = power_line(
        compared(
            {**COMPARED, "baseline_n": 20, "baseline_k": 19, "stages": {"samples": 20, "max_samples": 40, "look": 10}}
        )
    )
    assert line is not None
    assert "20 samples now, up to 40" in line
    assert "the baseline holds 20 samples where the suite now records 100: compared with the sizes it holds" in line


def test_a_case_that_can_see_no_drop_says_so() -> None:
    line = power_line(compared({**COMPARED, "baseline_k": 1, "baseline_n": 20, "detectable_drop": None}))
    assert line is not None and line.startswith("Detectable drop: none, no fall in agreement is caught 80%")


def test_cases_not_compared_have_no_line() -> None:
    assert power_line(None) is None
    assert power_line(typed(NotCompared, {"status": "no_baseline"})) is None
