"""Every case's verdict, in the order of precedence of docs/design.md ("Judging"):
error > fail > regressed > new > pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from stabilitygate.judge.agreement import primary_agreement
from stabilitygate.judge.baseline import Baseline, BaselineCase
from stabilitygate.judge.compare import Comparison, Similarity, compare_case
from stabilitygate.judge.conclusion import Conclusion, conclude
from stabilitygate.judge.stats import holm
from stabilitygate.judge.thresholds import ThresholdCheck, check_thresholds, measurement_error
from stabilitygate.judge.wording import update_hint
from stabilitygate.results import Agreement, CaseMeasurement, CaseVerdict, VerdictName
from stabilitygate.suite.model import Regression, ResolvedCase

BaselineStatus = Literal["compared", "no_baseline", "missing", "changed", "not_measured"]

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
    """What is known about a measured case before Holm's correction can be applied."""

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
) -> list[CaseVerdict]:
    by_id = {m.id: m for m in measurements}
    plans = [_plan(case, by_id.get(case.id), baseline, similarity) for case in cases]
    comparisons = [plan.comparison if isinstance(plan, _Measured) else None for plan in plans]
    # One Holm family: every case whose drop could be tested, so that a run with no real change
    # fails anywhere with probability at most alpha.
    drop_p = [c.p_value if c is not None else None for c in comparisons]
    # A second family for the answer-change guard: is the baseline's answer significantly rarer now?
    answer_p = [c.answer_p_value if c is not None else None for c in comparisons]
    family = sum(p is not None for p in drop_p)
    return [
        _verdict(plan, p, answer, family, regression)
        for plan, p, answer in zip(plans, _holm_family(drop_p), _holm_family(answer_p), strict=True)
    ]


def _holm_family(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm-adjusted p-values of the cases that have one, as one family; None stays None."""
    tested = [(i, p) for i, p in enumerate(p_values) if p is not None]
    adjusted: list[float | None] = [None] * len(p_values)
    for (i, _), p in zip(tested, holm([p for _, p in tested]), strict=True):
        adjusted[i] = p
    return adjusted


# --- before Holm --------------------------------------------------------------------------------


def _plan(
    case: ResolvedCase, m: CaseMeasurement | None, baseline: Baseline | None, similarity: Similarity | None
) -> _Plan:
    entry = baseline.cases.get(case.id) if baseline is not None else None
    baseline_hash = entry.hash if entry is not None else None
    if m is None:
        return _Unmeasured(case, None, baseline_hash, NOT_MEASURED)
    primary = primary_agreement(case, m)
    error = measurement_error(case, m)
    if error is not None:
        return _Unmeasured(case, primary, baseline_hash, error)
    status = _baseline_status(case, baseline, entry)
    comparison = None
    if status == "compared" and entry is not None:
        comparison = compare_case(case, m, entry, primary, similarity=similarity)
    checks = check_thresholds(case, m, primary)
    return _Measured(case, primary, baseline_hash, status, _headline(m, primary), checks, comparison)


def _baseline_status(case: ResolvedCase, baseline: Baseline | None, entry: BaselineCase | None) -> BaselineStatus:
    if baseline is None:
        return "no_baseline"
    if entry is None:
        return "missing"
    if entry.hash != case.definition_hash:
        return "changed"
    return "compared"


def _headline(m: CaseMeasurement, primary: Agreement | None) -> str:
    """One sentence with the case's headline numbers."""
    unique = m.metrics.get("unique_completions")
    parts = []
    if unique is not None:
        parts.append(f"{unique} unique completion{'s' if unique != 1 else ''} in {m.samples_ok} samples")
    if primary is not None:
        parts.append(f"{primary.label} {primary.k}/{primary.n}")
    cosine = m.metrics.get("cosine_min")
    if cosine is not None:
        parts.append(f"min cosine {float(cosine):.3f}")
    if m.sample_errors:
        parts.append(f"{m.sample_errors} failed sample{'s' if m.sample_errors != 1 else ''}")
    return "measured: " + ", ".join(parts) if parts else "measured: no numbers"


# --- after Holm ---------------------------------------------------------------------------------


def _verdict(
    plan: _Plan, p_holm: float | None, answer_p_holm: float | None, family: int, regression: Regression
) -> CaseVerdict:
    if isinstance(plan, _Unmeasured):
        mapping = _status_mapping("not_measured", plan.baseline_hash, plan.case)
        return CaseVerdict(plan.case.id, "error", [plan.error], mapping, primary=plan.primary)
    conclusion = _conclusion(plan, p_holm, answer_p_holm, family, regression)
    verdict, reasons = _decide(plan, conclusion)
    if conclusion is not None:
        mapping = conclusion.to_json()
    else:
        mapping = _status_mapping(plan.status, plan.baseline_hash, plan.case)
    return CaseVerdict(plan.case.id, verdict, reasons, mapping, primary=plan.primary)


def _conclusion(
    plan: _Measured, p_holm: float | None, answer_p_holm: float | None, family: int, regression: Regression
) -> Conclusion | None:
    """What the comparison with the baseline means, now that the Holm-adjusted p-values are known."""
    if plan.comparison is None:
        return None
    return conclude(
        plan.comparison,
        p_holm,
        regression,
        cluster_cosine=plan.case.thresholds.cluster_cosine,
        family=family,
        answer_p_holm=answer_p_holm,
    )


def _decide(plan: _Measured, conclusion: Conclusion | None) -> tuple[VerdictName, list[str]]:
    """The verdict by precedence (fail > regressed > new > pass), with its reasons: the deciding
    sentences first, then the headline numbers, thresholds met and thresholds not checked."""
    checks = plan.checks
    found = conclusion.reasons if conclusion is not None else []
    met = [f"thresholds met: {', '.join(checks.met)}"] if checks.met else []
    if checks.violations:
        return "fail", [*checks.violations, plan.headline, *found, *met, *checks.skipped]
    tail = [plan.headline, *met, *checks.skipped]
    if conclusion is not None and conclusion.regressed:
        return "regressed", [*found, *tail]
    if plan.status != "compared":
        return "new", [NEW_BECAUSE[plan.status], *tail]
    return "pass", [*found, *tail]


def _status_mapping(status: BaselineStatus, baseline_hash: str | None, case: ResolvedCase) -> dict[str, Any]:
    """The report's `baseline` mapping of a case that was not compared."""
    mapping: dict[str, Any] = {"status": status}
    if baseline_hash is not None:
        mapping["hash"] = baseline_hash
    if status == "changed":
        mapping["current_hash"] = case.definition_hash
    return mapping
