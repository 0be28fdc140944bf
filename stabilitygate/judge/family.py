"""The run's one family of significance tests, corrected across cases, rules and stages.

Every test that can fail a case (the drop test, and the guards of the answer-change and
meaning-drift rules) enters with its first-stage p-value, its p-value after a second stage when
the case had one, and the least p-values it could reach at its baseline's counts. The stages are
combined into one valid p-value per test (judge/stages.py), and Tarone-Holm (judge/discrete.py)
corrects the family, leaving out the tests that could never be significant.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from stabilitygate.against_baseline import StageSizes
from stabilitygate.judge.compare import Comparison
from stabilitygate.judge.conclusion import HolmValues
from stabilitygate.judge.discrete import FamilyDecision, FamilyTest, first_level, step_down
from stabilitygate.judge.power import detectable_drop
from stabilitygate.judge.stages import StageDesign, StageFacts, StageName, combined_p, combined_p_min
from stabilitygate.judge.stats import drop_test
from stabilitygate.suite.model import Regression


@dataclass(frozen=True)
class RuleTest:
    """One test of the family, as its case's stages left it."""

    design: StageDesign
    p_first: float  # on the first `samples` samples (the only stage, without a second)
    p_final: float | None  # on every sample, after a second stage; None without one
    p_min_first: float  # the least p_first could have been, at the baseline's counts
    p_min_last: float  # the least p-value at `max_samples`
    looked: bool = False  # stopped at the look (unanimous with the baseline): cannot fail

    @property
    def p_value(self) -> float:
        """The test's p-value across the stages."""
        return 1.0 if self.looked else combined_p(self.design, self.p_first, self.p_final)

    @property
    def p_min(self) -> float:
        return combined_p_min(self.design, self.p_min_first, self.p_min_last)


def correct_family(tests: Sequence[RuleTest], alpha: float) -> list[FamilyDecision]:
    """Each test's corrected p-value, level and decision, in the order given."""
    return step_down([FamilyTest(t.p_value, t.p_min) for t in tests], alpha)


def drop_p_min(k_base: int, n_base: int, n_cur: int) -> float:
    """The least p-value the drop test can reach against k_base/n_base with n_cur samples now: at a
    current agreement of 0. A baseline already at the floor (k_base of 1, say) cannot reach alpha."""
    if n_base <= 0 or n_cur <= 0:
        return 1.0
    return drop_test(k_base, n_base, 0, n_cur).p_value


def guard_p_min(baseline_count: int, baseline_n: int) -> float:
    """The answer-change and meaning-drift guards fail a case only when the baseline's modal answer
    (or meaning) held a majority: without one they can never reject (1.0); with one, counted (0.0)."""
    return 0.0 if baseline_count * 2 > baseline_n else 1.0


# --- the run's family, from the cases' comparisons ------------------------------------------------

RULES = ("drop", "answer", "meaning")


@dataclass(frozen=True)
class CaseTests:
    """What the family needs of one compared case: its comparisons and its design."""

    final: Comparison  # on every sample the case drew
    first: Comparison | None  # on its first `samples` samples, when it took a second stage
    design: StageDesign
    looked: bool  # stopped at the look
    baseline_samples: int | None = None  # what the suite records now (it may differ from the baseline's n)


@dataclass(frozen=True)
class Family:
    """The family corrected: each case's adjusted p-value per rule, the family's size and first level."""

    adjusted: list[HolmValues]
    size: int
    first_level: float  # alpha / K of the first step: what a case with the run's smallest p is held to


def run_family(cases: Sequence[CaseTests | None], regression: Regression) -> Family:
    """Tarone-Holm over every test that can fail a case, across the cases, the rules and the stages."""
    slots: list[tuple[int, str]] = []
    tests: list[RuleTest] = []
    for i, case in enumerate(cases):
        if case is None:
            continue
        for rule, test in _rule_tests(case, regression).items():
            slots.append((i, rule))
            tests.append(test)
    decisions = correct_family(tests, regression.alpha)
    per_case: list[dict[str, float]] = [{} for _ in cases]
    for (i, rule), decision in zip(slots, decisions, strict=True):
        per_case[i][rule] = decision.p_adjusted
    level = first_level([t.p_min for t in tests], regression.alpha)
    return Family([HolmValues(**values) for values in per_case], len(tests), level)


def _rule_tests(case: CaseTests, regression: Regression) -> dict[str, RuleTest]:
    """The case's tests that can fail it, by rule; a test with nothing to weigh is left out."""
    enabled = {"drop": True, "answer": regression.fail_on_answer_change, "meaning": regression.fail_on_semantic_drift}
    first = case.first or case.final
    minima = _p_mins(case)
    tests = {}
    for rule in RULES:
        p_first = _p(first, rule)
        p_final = _p(case.final, rule) if case.first is not None else None
        if not enabled[rule] or (p_first is None and p_final is None):
            continue
        low_first, low_last = minima[rule]
        tests[rule] = RuleTest(
            case.design, 1.0 if p_first is None else p_first, p_final, low_first, low_last, case.looked
        )
    return tests


def _p(c: Comparison, rule: str) -> float | None:
    if rule == "drop":
        return c.p_value if c.drop_testable else None
    return c.answer_p_value if rule == "answer" else c.meaning_p_value


def _p_mins(case: CaseTests) -> dict[str, tuple[float, float]]:
    """Each rule's least p-values at the first stage's size and at `max_samples`, from the baseline alone."""
    a, before = case.final.agreement, case.final.modal.before
    drop = (0.0, 0.0)
    if a.baseline_k is not None and a.baseline_n:
        drop = (
            drop_p_min(a.baseline_k, a.baseline_n, case.design.first),
            drop_p_min(a.baseline_k, a.baseline_n, case.design.last),
        )
    answer = guard_p_min(before.count, before.n) if before is not None else 0.0
    # The meaning rule fails a case only when the baseline held one majority meaning.
    shared = case.final.baseline_metrics.semantic_agreement
    meaning = 1.0 if shared is not None and shared <= 0.5 else 0.0
    return {"drop": drop, "answer": (answer, answer), "meaning": (meaning, meaning)}


def stage_facts(case: CaseTests, family: Family, regression: Regression) -> StageFacts:
    """The report's record of the case's stages and of the drop it could see (docs/design.md §6)."""
    current, a = case.final.agreement.current, case.final.agreement
    design = case.design
    if not design.adaptive and current is not None:
        design = StageDesign(current.n, current.n)  # the sizes the comparison held
    drop = None
    if a.baseline_k is not None and a.baseline_n:
        drop = detectable_drop(a.baseline_k, a.baseline_n, design, family.first_level, regression.min_drop)
    stage: StageName = "look" if case.looked else ("second" if case.first is not None else "first")
    return StageFacts(
        stage=stage,
        sizes=StageSizes(samples=case.design.first, max_samples=case.design.last, look=case.design.look),
        detectable_drop=drop,
        power_level=family.first_level,
        suite_baseline_samples=case.baseline_samples,
    )
