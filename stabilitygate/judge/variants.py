"""Each variant against its case as written: the same figures, and whether the difference is significant.

The agreement compared is the case's own primary metric (docs/design.md §6), computed on the
variant's samples. The test is two-sided, since a remedy may make things worse: twice the smaller
of the two one-sided exact tests of `judge/exact.py` (Fisher's, given the pooled count), capped at 1.
Every variant test of the run forms one Holm family of its own, apart from the run's
family: variants are reported, never judged (docs/design.md §16, "Variants").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from stabilitygate.judge.discrete import holm
from stabilitygate.judge.exact import drop_p
from stabilitygate.judge.wording import decoded
from stabilitygate.metrics import Agreement, MetricName
from stabilitygate.remedies import Change, VariantResult
from stabilitygate.results import CaseMeasurement
from stabilitygate.typed_json import JSON

#: A modal completion (a variant without a parser) is kept this long in the report.
MODAL_CHARS = 300


@dataclass(frozen=True)
class MeasuredVariant:
    """One variant of one case as drawn: its measurement, or why it has none worth comparing."""

    case_id: str
    name: str
    overrides: tuple[str, ...]
    samples_requested: int
    measurement: CaseMeasurement | None
    error: str | None = None
    json_answer: bool = False  # its parser is `json`: answers are canonical JSON text, shown decoded


def compare_variants(
    own: Mapping[str, Agreement | None], variants: Sequence[MeasuredVariant], alpha: float
) -> dict[str, tuple[VariantResult, ...]]:
    """The variants of each case (by case id, in the order given) against the case's own primary agreement."""
    results = [_result(v, own.get(v.case_id)) for v in variants]
    # A test whose runs hold no variation (all successes, or none) cannot reject: left out of the family.
    tested = [
        i for i, r in enumerate(results) if r.p_value is not None and _can_reject(r.primary, own[variants[i].case_id])
    ]
    adjusted = holm([results[i].p_value or 1.0 for i in tested])
    for i, p in zip(tested, adjusted, strict=True):
        results[i] = replace(results[i], p_holm=p, significant=p < alpha)
    grouped: dict[str, list[VariantResult]] = {}
    for variant, result in zip(variants, results, strict=True):
        grouped.setdefault(variant.case_id, []).append(result)
    return {case_id: tuple(rows) for case_id, rows in grouped.items()}


def _can_reject(variant: Agreement | None, own: Agreement | None) -> bool:
    if variant is None or own is None:
        return False
    successes = variant.k + own.k
    return 0 < successes < variant.n + own.n


def two_sided_p(own: Agreement, variant: Agreement) -> float:
    """Twice the smaller one-sided exact p-value of "the rates differ", at most 1."""
    lower = drop_p(own.k, own.n, variant.k, variant.n)
    higher = drop_p(variant.k, variant.n, own.k, own.n)
    return min(1.0, 2 * min(lower, higher))


def agreement_on(metric: MetricName, m: CaseMeasurement) -> Agreement | None:
    """`metric` as k of n on a measurement (None when it was not measured there)."""
    n = m.samples_ok
    if n <= 0:
        return None
    if metric == "parsed_agreement":
        return Agreement(metric, m.answers[0].count if m.answers else 0, n)
    if metric == "semantic_agreement":
        share = m.metrics.semantic_agreement
        return None if share is None else Agreement(metric, round(share * n), n)
    return Agreement(metric, m.completions[0].count if m.completions else 0, n)


def _result(variant: MeasuredVariant, own: Agreement | None) -> VariantResult:
    m = variant.measurement
    base = VariantResult(
        name=variant.name,
        overrides=variant.overrides,
        samples_requested=variant.samples_requested,
        samples_ok=m.samples_ok if m is not None else 0,
        sample_errors=m.sample_errors if m is not None else 0,
        error=variant.error,
    )
    if m is None:
        return base
    tokens = [m.metrics.prompt_tokens, m.metrics.completion_tokens]
    primary = agreement_on(own.metric, m) if own is not None else None
    testable = variant.error is None and own is not None and primary is not None
    modal, modal_count = _modal(m, variant.json_answer)
    return replace(
        base,
        accuracy=m.metrics.accuracy,
        modal=modal,
        modal_count=modal_count,
        unique_completions=m.metrics.unique_completions,
        answers=len(m.answers) if m.metrics.parsed_agreement is not None else None,
        parsed_agreement=m.metrics.parsed_agreement,
        semantic_agreement=m.metrics.semantic_agreement,
        tokens=sum(t for t in tokens if t is not None) if any(t is not None for t in tokens) else None,
        primary=primary,
        p_value=two_sided_p(own, primary) if testable and own is not None and primary is not None else None,
        change=_change(own, primary) if testable and own is not None and primary is not None else None,
    )


def _modal(m: CaseMeasurement, json_answer: bool) -> tuple[JSON, int | None]:
    """The most common parsed answer (decoded) and its count; without a parser, the most common completion."""
    if m.metrics.parsed_agreement is not None:
        top = m.answers[0] if m.answers else None
        return (_cut(decoded(top.answer, json_answer)), top.count) if top is not None else (None, None)
    first = m.completions[0] if m.completions else None
    return (_cut(first.text), first.count) if first is not None else (None, None)


def _cut(value: JSON) -> JSON:
    """A long text cut to MODAL_CHARS (the report's texts are bounded; the samples file has it whole)."""
    return value[: MODAL_CHARS - 1] + "…" if isinstance(value, str) and len(value) > MODAL_CHARS else value


def _change(own: Agreement, variant: Agreement) -> Change:
    if variant.value > own.value:
        return "better"
    return "worse" if variant.value < own.value else "same"
