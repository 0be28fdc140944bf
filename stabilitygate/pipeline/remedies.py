"""The remedies' part of a report: variants compared, probes tested, each case diagnosed, conditions compared.

Runs after the verdicts and the baseline, on the finished report, and changes no verdict, reason or
exit code: everything here is reported, never judged (docs/design.md §16, "Remedies"). What only
live sampling knows (the conditions) goes to `run.conditions`, never into the cases.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from stabilitygate.conditions import Conditions, Probe
from stabilitygate.judge.baseline import Baseline
from stabilitygate.judge.diagnosis import Evidence, diagnose, suggestion_from_remedies
from stabilitygate.judge.probe import probe_results, probed_cases
from stabilitygate.judge.variants import MeasuredVariant, compare_variants
from stabilitygate.pipeline.conditions import conditions_facts
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
    probe: Probe | None = None  # sampling.probe
    variants: Sequence[MeasuredVariant] = ()
    conditions: Mapping[str, Conditions] | None = None  # live runs only: how each case was drawn


def with_remedies(report: Report, inputs: RemedyInputs) -> Report:
    """The report with each case's variants, probe and diagnosis, and the run's conditions."""
    by_id = {c.id: c for c in inputs.cases}
    probes = probe_results(probed_cases(inputs.cases, inputs.probe), inputs.samples, alpha=inputs.alpha)
    variants = compare_variants({c.id: c.primary for c in report.cases}, inputs.variants, inputs.alpha)
    rows = tuple(
        _with_remedies(result, by_id[result.id], probes.get(result.id), variants.get(result.id, ()))
        if result.id in by_id
        else result
        for result in report.cases
    )
    run = report.run
    if inputs.conditions is not None:
        run = replace(run, conditions=conditions_facts(rows, inputs.cases, inputs.conditions, inputs.baseline))
    return replace(report, cases=rows, run=run)


def _with_remedies(
    result: CaseResult, case: ResolvedCase, probe: ProbeResult | None, variants: tuple[VariantResult, ...]
) -> CaseResult:
    evidence = Evidence(
        measurement=result.measurement,
        parser=case.answer.kind if case.answer is not None else None,
        idempotency=case.idempotency,
        probe=probe,
        variants=variants,
    )
    unique = result.metrics.unique_completions
    idempotent = unique == 1 if case.idempotency == "shared" and unique else None
    diagnostics = replace(
        result.diagnostics,
        diagnosis=diagnose(evidence),
        suggestion=suggestion_from_remedies(evidence) or result.diagnostics.suggestion,
        idempotent=idempotent,
    )
    notes = result.notes + ((idempotency_note(idempotent, unique or 0),) if idempotent is not None else ())
    return replace(result, diagnostics=diagnostics, notes=notes, variants=variants, probe=probe)


def idempotency_note(idempotent: bool, unique: int) -> str:
    """The case's word on its idempotency key: "idempotent: yes/no, N distinct completions for one key"."""
    said = "yes" if idempotent else "no"
    return f"idempotent: {said}, {unique} distinct completion{'' if unique == 1 else 's'} for one key"


__all__ = ["RemedyInputs", "idempotency_note", "with_remedies"]
