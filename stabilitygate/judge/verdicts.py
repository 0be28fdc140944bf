"""Every case's verdict, in DESIGN section 6's order of precedence: error > fail > regressed > new > pass."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from stabilitygate.judge.baseline import Baseline
from stabilitygate.judge.compare import Comparison, Similarity, compare_case, conclude
from stabilitygate.judge.stats import holm
from stabilitygate.judge.thresholds import ThresholdCheck, check_thresholds, measurement_error, primary_agreement
from stabilitygate.results import CaseMeasurement, CaseVerdict
from stabilitygate.suite.model import Regression, ResolvedCase

UPDATE_HINT = "run with --update-baseline to record it"
CHANGED = f"the case changed since the baseline (prompt, model, params or parser): {UPDATE_HINT}"


@dataclass(frozen=True)
class _Plan:
    """What is known about a case before Holm's correction can be applied."""

    case: ResolvedCase
    measurement: CaseMeasurement | None
    error: str | None
    checks: ThresholdCheck | None
    status: str  # compared | no_baseline | missing | changed | not_measured
    comparison: Comparison | None
    baseline_hash: str | None


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

    # One Holm family: every case whose drop could be tested, so that a run with no real change
    # fails anywhere with probability at most alpha.
    tested = {
        i: plan.comparison.p_value
        for i, plan in enumerate(plans)
        if plan.comparison is not None and plan.comparison.p_value is not None
    }
    p_holm = dict(zip(tested, holm(list(tested.values())), strict=True))
    # A second family for the answer-change guard: is the baseline's answer significantly rarer now?
    answers = {
        i: plan.comparison.answer_p_value
        for i, plan in enumerate(plans)
        if plan.comparison is not None and plan.comparison.answer_p_value is not None
    }
    answer_holm = dict(zip(answers, holm(list(answers.values())), strict=True))
    return [
        _verdict(plan, p_holm.get(i), regression, len(tested), answer_holm.get(i)) for i, plan in enumerate(plans)
    ]


def _plan(
    case: ResolvedCase, m: CaseMeasurement | None, baseline: Baseline | None, similarity: Similarity | None
) -> _Plan:
    entry = baseline.cases.get(case.id) if baseline is not None else None
    baseline_hash = entry.hash if entry is not None else None
    if m is None:
        return _Plan(
            case,
            None,
            "the case was not measured (the run stopped before it)",
            None,
            "not_measured",
            None,
            baseline_hash,
        )
    error = measurement_error(case, m)
    if error is not None:
        return _Plan(case, m, error, None, "not_measured", None, baseline_hash)
    checks = check_thresholds(case, m)
    if baseline is None:
        return _Plan(case, m, None, checks, "no_baseline", None, None)
    if entry is None:
        return _Plan(case, m, None, checks, "missing", None, None)
    if entry.hash != case.definition_hash:
        return _Plan(case, m, None, checks, "changed", None, baseline_hash)
    comparison = compare_case(case, m, entry, similarity=similarity)
    return _Plan(case, m, None, checks, "compared", comparison, baseline_hash)


def _verdict(
    plan: _Plan, p_holm: float | None, regression: Regression, family: int, answer_p_holm: float | None
) -> CaseVerdict:
    case = plan.case
    data: dict[str, Any] = {"status": plan.status}
    if plan.baseline_hash is not None:
        data["hash"] = plan.baseline_hash
    if plan.status == "changed":
        data["current_hash"] = case.definition_hash

    if plan.error is not None or plan.measurement is None or plan.checks is None:
        return CaseVerdict(case.id, "error", [plan.error or "the case could not be measured"], data)

    m, checks = plan.measurement, plan.checks
    measured = _measured(case, m)
    regressed = False
    comparison_reasons: list[str] = []
    if plan.comparison is not None:
        conclusion = conclude(
            plan.comparison,
            p_holm,
            regression,
            cluster_cosine=case.thresholds.cluster_cosine,
            family=family,
            answer_p_holm=answer_p_holm,
        )
        regressed = conclusion.regressed
        comparison_reasons = conclusion.reasons
        data = conclusion.data

    met = [f"thresholds met: {', '.join(checks.met)}"] if checks.met else []
    if checks.violations:
        reasons = [*checks.violations, measured, *comparison_reasons, *met, *checks.skipped]
        return CaseVerdict(case.id, "fail", reasons, data)
    if regressed:
        return CaseVerdict(case.id, "regressed", [*comparison_reasons, measured, *met, *checks.skipped], data)
    if plan.status != "compared":
        new = {
            "no_baseline": f"no baseline yet: {UPDATE_HINT}",
            "missing": f"the baseline has no entry for this case: {UPDATE_HINT}",
            "changed": CHANGED,
        }[plan.status]
        return CaseVerdict(case.id, "new", [new, measured, *met, *checks.skipped], data)
    return CaseVerdict(case.id, "pass", [*comparison_reasons, measured, *met, *checks.skipped], data)


def _measured(case: ResolvedCase, m: CaseMeasurement) -> str:
    """One sentence with the case's headline numbers."""
    unique = m.metrics.get("unique_completions")
    parts = []
    if unique is not None:
        parts.append(f"{unique} unique completion{'s' if unique != 1 else ''} in {m.samples_ok} samples")
    primary = primary_agreement(case, m)
    if primary is not None:
        parts.append(f"{primary.label} {primary.k}/{primary.n}")
    cosine = m.metrics.get("cosine_min")
    if cosine is not None:
        parts.append(f"min cosine {float(cosine):.3f}")
    if m.sample_errors:
        parts.append(f"{m.sample_errors} failed sample{'s' if m.sample_errors != 1 else ''}")
    return "measured: " + ", ".join(parts) if parts else "measured: no numbers"
