"""Every case's verdict, in the order of precedence of docs/design.md ("Judging"):
error > fail > regressed > warn > new > pass.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from stabilitygate.against_baseline import AgainstBaseline, NotCompared, NotComparedStatus
from stabilitygate.judge.agreement import primary_agreement
from stabilitygate.judge.baseline import Baseline
from stabilitygate.judge.compare import Comparison, SameMeaning, Similarity, compare_case
from stabilitygate.judge.conclusion import Conclusion, conclude
from stabilitygate.judge.family import CaseOutcome, CaseTests, run_family, stage_facts
from stabilitygate.judge.stages import CasePath, StageDesign, StageFacts
from stabilitygate.judge.thresholds import ThresholdCheck, check_thresholds, measurement_error
from stabilitygate.judge.wording import update_hint
from stabilitygate.results import Agreement, CaseMeasurement, CaseVerdict, VerdictName
from stabilitygate.suite.model import Regression, ResolvedCase
from stabilitygate.suite.sizes import baseline_size

BaselineStatus = NotComparedStatus | Literal["compared"]

NOT_MEASURED = "the case was not measured (the run stopped before it)"
CHANGED = f"the case changed since the baseline (prompt, model, params or parser): {update_hint()}"
NEW_BECAUSE: dict[BaselineStatus, str] = {
    "no_baseline": f"no baseline yet: {update_hint()}",
    "missing": f"the baseline has no entry for this case: {update_hint()}",
    "changed": CHANGED,
}


@dataclass(frozen=True)
class _Unmeasured:
    """A case that could not be measured: its verdict is error whatever else holds."""

    case: ResolvedCase
    primary: Agreement | None
    baseline_hash: str | None
    error: str


@dataclass(frozen=True)
class _Measured:
    """What is known about a measured case before the run's correction can be applied."""

    case: ResolvedCase
    primary: Agreement | None
    baseline_hash: str | None
    status: BaselineStatus
    headline: str  # "measured: ..." with the case's numbers
    checks: ThresholdCheck
    comparison: Comparison | None  # set exactly when status is "compared"


_Plan = _Unmeasured | _Measured


def judge_cases(
    cases: Sequence[ResolvedCase],
    measurements: Sequence[CaseMeasurement],
    baseline: Baseline | None,
    regression: Regression,
    *,
    similarity: Similarity | None = None,
    same_meaning: SameMeaning | None = None,
    same_meaning_by_case: Mapping[str, SameMeaning] | None = None,
    paths: Mapping[str, CasePath] | None = None,
) -> list[CaseVerdict]:
    """`same_meaning_by_case`: a case's own judge of meaning (its entailment judge), before `same_meaning`.
    `paths`: how each compared case of a pull-request run was sampled (judge/stages.py); a case
    without one was drawn in one fixed stage."""
    by_id = {m.id: m for m in measurements}
    own = same_meaning_by_case or {}
    plans = [_plan(case, by_id.get(case.id), baseline, similarity, own.get(case.id, same_meaning)) for case in cases]
    tests = [_case_tests(plan, (paths or {}).get(plan.case.id)) for plan in plans]
    family = run_family(tests, regression)
    return [
        _verdict(plan, outcome, family.size, regression, stage_facts(t, family, regression) if t else None)
        for plan, outcome, t in zip(plans, family.cases, tests, strict=True)
    ]


def _case_tests(plan: _Plan, path: CasePath | None) -> CaseTests | None:
    """A compared case's part in the run's one family: its comparison and its sampling path, so that a
    run with no real change fails anywhere, by any rule, at any stage, with probability at most alpha
    (docs/design.md §6, "The family")."""
    if not isinstance(plan, _Measured) or plan.comparison is None:
        return None
    if path is None:
        n = plan.primary.n if plan.primary is not None else plan.case.samples
        path = CasePath(StageDesign(n, n), n, ())
    return CaseTests(plan.comparison, path, baseline_size(plan.case))


# --- before the correction --------------------------------------------------------------------------------


def _plan(
    case: ResolvedCase,
    m: CaseMeasurement | None,
    baseline: Baseline | None,
    similarity: Similarity | None,
    same_meaning: SameMeaning | None,
) -> _Plan:
    entry = baseline.cases.get(case.id) if baseline is not None else None
    baseline_hash = entry.hash if entry is not None else None
    if m is None:
        return _Unmeasured(case, None, baseline_hash, NOT_MEASURED)
    primary = primary_agreement(case, m)
    error = measurement_error(case, m)
    if error is None and m.diagnostics.entailment_error is not None:  # a missing judgment: not measured
        error = f"could not measure the meanings: {m.diagnostics.entailment_error}"
    if error is not None:
        return _Unmeasured(case, primary, baseline_hash, error)
    status = _baseline_status(case, baseline)
    comparison = None
    if status == "compared" and entry is not None:
        comparison = compare_case(case, m, entry, primary, similarity=similarity, same_meaning=same_meaning)
    checks = check_thresholds(case, m, primary)
    return _Measured(case, primary, baseline_hash, status, _headline(m, primary), checks, comparison)


def _baseline_status(case: ResolvedCase, baseline: Baseline | None) -> BaselineStatus:
    if baseline is None:
        return "no_baseline"
    if case.id not in baseline.cases:
        return "missing"
    return "compared" if baseline.entry_for(case) is not None else "changed"


def _headline(m: CaseMeasurement, primary: Agreement | None) -> str:
    """One sentence with the case's headline numbers."""
    unique = m.metrics.unique_completions
    parts = []
    if unique is not None:
        parts.append(f"{unique} unique completion{'s' if unique != 1 else ''} in {m.samples_ok} samples")
    if primary is not None:
        parts.append(f"{primary.label} {primary.k}/{primary.n}")
    cosine = m.metrics.cosine_min
    if cosine is not None:
        parts.append(f"min cosine {cosine:.3f}")
    if m.sample_errors:
        parts.append(f"{m.sample_errors} failed sample{'s' if m.sample_errors != 1 else ''}")
    return "measured: " + ", ".join(parts) if parts else "measured: no numbers"


# --- after the correction ---------------------------------------------------------------------------------


def _verdict(
    plan: _Plan, outcome: CaseOutcome | None, family: int, regression: Regression, stage: StageFacts | None
) -> CaseVerdict:
    if isinstance(plan, _Unmeasured):
        unmeasured = _not_compared("not_measured", plan.baseline_hash, plan.case)
        return CaseVerdict(plan.case.id, "error", (plan.error,), unmeasured, primary=plan.primary)
    conclusion = None
    if plan.comparison is not None:
        conclusion = conclude(plan.comparison, regression, outcome=outcome, family=family)
    verdict, reasons = _decide(plan, conclusion)
    record: AgainstBaseline
    if conclusion is not None:
        record = conclusion.record(stage)
    else:
        assert plan.status != "compared"  # a compared plan always has its comparison
        record = _not_compared(plan.status, plan.baseline_hash, plan.case)
    return CaseVerdict(plan.case.id, verdict, tuple(reasons), record, primary=plan.primary)


def _decide(plan: _Measured, conclusion: Conclusion | None) -> tuple[VerdictName, list[str]]:
    """The verdict by precedence (fail > regressed > warn > new > pass), with its reasons: the deciding
    sentences first, then the headline numbers, thresholds met and thresholds not checked."""
    checks = plan.checks
    found = conclusion.reasons if conclusion is not None else []
    met = [f"thresholds met: {', '.join(checks.met)}"] if checks.met else []
    if checks.violations:
        return "fail", [*checks.violations, plan.headline, *found, *met, *checks.skipped]
    tail = [plan.headline, *met, *checks.skipped]
    if conclusion is not None and conclusion.regressed:
        return "regressed", [*found, *tail]
    if conclusion is not None and conclusion.warned:
        return "warn", [*found, *tail]
    if plan.status != "compared":
        return "new", [NEW_BECAUSE[plan.status], *tail]
    return "pass", [*found, *tail]


def _not_compared(status: NotComparedStatus, baseline_hash: str | None, case: ResolvedCase) -> NotCompared:
    """The report's record of a case that was not compared."""
    return NotCompared(status, baseline_hash, case.definition_hash if status == "changed" else None)
