"""The run's one family: each compared case's exact test, corrected across the cases.

A compared case that reached its last stage is tested once, all its rules together (judge/case_test.py),
on its pooled answers and the path its sampling took (judge/stages.py); the exact discrete step-down
(judge/discrete.py) corrects the tested cases, and each rule of a case gets its own adjusted p-value
on the case's scale, so a rule regresses only when its case's test does. A case that stopped at a
check takes no part: it can never be failed by a test (docs/design.md §6, "The family").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from stabilitygate.judge.case_test import CaseTest, Rule, case_test
from stabilitygate.judge.compare import Comparison
from stabilitygate.judge.discrete import FamilyTest, StepDown, bonferroni_level, step_down
from stabilitygate.judge.power import detectable_drop
from stabilitygate.judge.stages import CasePath, StageDesign, StageFacts
from stabilitygate.suite.model import Regression


@dataclass(frozen=True)
class CaseTests:
    """What the family needs of one compared case: its comparison and how it was sampled."""

    comparison: Comparison
    path: CasePath
    baseline_samples: int | None = None  # what the suite records now (the baseline may differ)


@dataclass(frozen=True)
class Adjusted:
    """A case's p-values after the run's correction, one per rule (None: the rule was not tested)."""

    drop: float | None = None
    answer: float | None = None
    meaning: float | None = None
    parsed: float | None = None


@dataclass(frozen=True)
class CaseOutcome:
    """A compared case's test: each rule's own p-value, and, when it was tested, the adjusted ones."""

    test: CaseTest
    adjusted: Adjusted
    tested: bool  # reached its last stage and took part in the family


@dataclass(frozen=True)
class Family:
    """The family corrected: each compared case's test, how many cases it held, and their level."""

    cases: list[CaseOutcome | None]
    size: int  # cases tested whose test could fail them (a unanimous one cannot)
    level: float  # alpha / compared cases: the least level a case is held to at the family's first step


def run_family(cases: Sequence[CaseTests | None], regression: Regression) -> Family:
    """Every compared case tested, the tested ones corrected together (docs/design.md §6, "The family")."""
    tests = [_test(case, regression) if case is not None else None for case in cases]
    members = [i for i, (case, test) in enumerate(zip(cases, tests, strict=True)) if case and test and case.path.tested]
    family = step_down([FamilyTest(_p(tests[i]), _support(tests[i])) for i in members])
    position = {i: at for at, i in enumerate(members)}
    out: list[CaseOutcome | None] = []
    for i, (case, test) in enumerate(zip(cases, tests, strict=True)):
        if case is None or test is None:
            out.append(None)
            continue
        adjusted = _adjusted(test, family, position[i]) if i in position else Adjusted()
        out.append(CaseOutcome(test, adjusted, i in position))
    compared = sum(1 for case in cases if case is not None)
    can_fail = sum(1 for i in members if _support(tests[i])[0] < 1.0)
    return Family(out, can_fail, bonferroni_level(regression.alpha, compared))


def _test(case: CaseTests, regression: Regression) -> CaseTest:
    c = case.comparison
    rules = c.rules(regression)
    survival = case.path.survival(c.pool.n_baseline, c.pool.n_current) if case.path.tested else None
    return case_test(c.pool, rules, survival)


def _p(test: CaseTest | None) -> float:
    return 1.0 if test is None else test.p_value


def _support(test: CaseTest | None) -> tuple[float, ...]:
    return (1.0,) if test is None else test.support


def _adjusted(test: CaseTest, family: StepDown, index: int) -> Adjusted:
    values: dict[Rule, float] = {rule: family.adjusted(index, p.case) for rule, p in test.rules.items()}
    return Adjusted(**values)


def stage_facts(case: CaseTests, family: Family, regression: Regression) -> StageFacts:
    """The report's record of the case's stages and of the drop it could see (docs/design.md §6)."""
    a, design = case.comparison.agreement, case.path.design
    current = a.current
    if not design.adaptive and current is not None:
        design = StageDesign(current.n, current.n, design.can_look)  # the sizes the comparison held
    drop = None
    if a.baseline_k is not None and a.baseline_n:
        drop = detectable_drop(a.baseline_k, a.baseline_n, design, family.level, regression.min_drop)
    return StageFacts(
        stage=case.path.stage,
        sizes=case.path.design.sizes,
        detectable_drop=drop,
        power_level=family.level,
        suite_baseline_samples=case.baseline_samples,
    )
