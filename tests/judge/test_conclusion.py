"""A compared case decided once its Holm-corrected p-values are known."""

from __future__ import annotations

from stabilitygate.judge.conclusion import HolmValues, conclude
from stabilitygate.suite.model import Regression
from tests.judge.comparison_cases import case, compare, entry, run


def test_conclusion_without_holm_uses_the_raw_p() -> None:
    c = compare(case(True), run([("x", 6), ("y", 4)], [(1, 6), (2, 4)]), entry([("x", 10)], [(1, 10)]))
    result = conclude(c, Regression(), holm=HolmValues(), family=1)
    assert result.regressed and result.dropped and result.record(None).p_holm is None
    assert "p = 0.021 after Holm" in result.reasons[0]
