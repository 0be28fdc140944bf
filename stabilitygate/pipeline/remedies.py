"""The remedies' part of a report: variants compared, probes tested, conditions compared, each case diagnosed.

Runs after the verdicts and the baseline, on the finished report, and changes no verdict, reason or
exit code: everything here is reported, never judged (docs/design.md §15, "Remedies").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from stabilitygate.conditions import differences
from stabilitygate.judge.baseline import Baseline
from stabilitygate.judge.diagnosis import Evidence, diagnose, suggestion_from_conditions
from stabilitygate.judge.probe import probe_results, probed_cases
from stabilitygate.judge.variants import MeasuredVariant, compare_variants
from stabilitygate.remedies import ProbeResult, VariantResult
from stabilitygate.report.model import CaseResult, Report
from stabilitygate.samples import Sample
from stabilitygate.suite.model import ResolvedCase


@dataclass(frozen=True)
class RemedyInputs:
    """What the remedies of a run rest on besides its report."""

    cases: Sequence[ResolvedCase]
    samples: Sequence[Sample]
    baseline: Baseline | None
    alpha: float
    probe: str | None = None  # sampling.probe
    variants: Sequence[MeasuredVariant] = ()


def with_remedies(report: Report, inputs: RemedyInputs) -> Report:
    """The report with each case's variants, probe, conditions compared and diagnosis."""
    by_id = {c.id: c for c in inputs.cases}
    concurrency = report.run.sampling.concurrency if report.run.sampling is not None else None
    probes = probe_results(
        probed_cases(inputs.cases, inputs.probe), inputs.samples, alpha=inputs.alpha, concurrency=concurrency
    )
    variants = compare_variants({c.id: c.primary for c in report.cases}, inputs.variants, inputs.alpha)
    rows = tuple(
        _with_remedies(result, by_id[result.id], inputs.baseline, probes.get(result.id), variants.get(result.id, ()))
        if result.id in by_id
        else result
        for result in report.cases
    )
    return replace(report, cases=rows)


def _with_remedies(
    result: CaseResult,
    case: ResolvedCase,
    baseline: Baseline | None,
    probe: ProbeResult | None,
    variants: tuple[VariantResult, ...],
) -> CaseResult:
    entry = baseline.cases.get(case.id) if baseline is not None else None
    same_case = entry is not None and entry.hash == case.definition_hash
    differ = differences(entry.conditions if same_case and entry is not None else None, result.conditions)
    evidence = Evidence(
        measurement=result.measurement,
        parser=case.answer.kind if case.answer is not None else None,
        verdict=result.verdict,
        idempotency=case.idempotency,
        conditions_differ=differ,
        probe=probe,
        variants=variants,
    )
    unique = result.metrics.unique_completions
    idempotent = unique == 1 if case.idempotency == "shared" and unique else None
    diagnostics = replace(
        result.diagnostics,
        diagnosis=diagnose(evidence),
        suggestion=suggestion_from_conditions(evidence) or result.diagnostics.suggestion,
        conditions_differ=differ,
        idempotent=idempotent,
    )
    notes = result.notes + ((idempotency_note(idempotent, unique or 0),) if idempotent is not None else ())
    return replace(result, diagnostics=diagnostics, notes=notes, variants=variants, probe=probe)


def idempotency_note(idempotent: bool, unique: int) -> str:
    """The case's word on its idempotency key: "idempotent: yes/no, N distinct completions for one key"."""
    said = "yes" if idempotent else "no"
    return f"idempotent: {said}, {unique} distinct completion{'' if unique == 1 else 's'} for one key"


__all__ = ["RemedyInputs", "idempotency_note", "with_remedies"]
