"""A compared case decided once its corrected p-values are known: regressions, warnings, the rest."""

from __future__ import annotations

from stabilitygate.judge.case_test import CaseTest, RuleP
from stabilitygate.judge.conclusion import conclude
from stabilitygate.judge.family import Adjusted, CaseOutcome
from stabilitygate.suite.model import Regression
from tests.judge.comparison_cases import case, compare, entry, run

DROPPED = compare(case(True), run([("x", 6), ("y", 4)], [(1, 6), (2, 4)]), entry([("x", 10)], [(1, 10)]))
FLIPPED = compare(
    case(True), run([("y", 6), ("x", 4)], [(2, 6), (1, 4)]), entry([("x", 6), ("y", 4)], [(1, 6), (2, 4)])
)


def outcome(own: float, corrected: float | None, *, tested: bool = True) -> CaseOutcome:
    rules = {"drop": RuleP(own, own), "answer": RuleP(own, own)}
    adjusted = Adjusted(drop=corrected, answer=corrected) if tested else Adjusted()
    return CaseOutcome(CaseTest(own, (own, 1.0), rules), adjusted, tested)


def test_a_drop_significant_after_correction_regresses_with_both_p_values() -> None:
    result = conclude(DROPPED, Regression(), outcome=outcome(0.021, 0.042), family=2)
    assert result.regressed and result.dropped
    assert "a drop of 0.40, p = 0.042 after correction (0.021 on its own)" in result.reasons[0]
    record = result.record(None)
    assert (record.p_value, record.p_adjusted, record.test, record.family_size) == (0.021, 0.042, "permutation", 2)


def test_a_drop_below_twice_alpha_after_correction_is_a_warning_and_above_it_noise() -> None:
    result = conclude(DROPPED, Regression(), outcome=outcome(0.021, 0.09), family=5)
    assert not result.regressed and result.warned
    assert (
        "a drop of 0.40, p = 0.09 after correction (0.021 on its own): not significant, but below 0.1: "
        "a warning, not a failure"
    ) in result.reasons[0]
    noise = conclude(DROPPED, Regression(), outcome=outcome(0.021, 0.12), family=9)
    assert not noise.warned and noise.reasons[0].endswith("(0.021 on its own): not significant")


def test_a_case_that_stopped_at_a_check_is_told_so_and_never_fails() -> None:
    result = conclude(DROPPED, Regression(), outcome=outcome(0.021, None, tested=False), family=0)
    assert not result.regressed and not result.warned
    assert "stopped early: clearly unchanged (p = 0.021 on its own)" in result.reasons[0]
    assert result.record(None).tested is False and result.record(None).p_adjusted is None


def test_a_narrow_majority_flipping_without_evidence_is_no_warning() -> None:
    result = conclude(FLIPPED, Regression(), outcome=outcome(0.6, 1.0), family=1)
    assert not result.regressed and not result.warned
    assert any("a narrow majority flipping by chance" in r for r in result.reasons)


def test_a_flip_with_evidence_on_its_own_warns_and_after_correction_regresses() -> None:
    warned = conclude(FLIPPED, Regression(), outcome=outcome(0.03, 0.07), family=8)
    assert warned.warned and not warned.regressed
    failed = conclude(FLIPPED, Regression(), outcome=outcome(0.003, 0.02), family=8)
    assert failed.regressed and "answer changed" in failed.reasons[0]
