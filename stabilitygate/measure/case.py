"""measure_case: one case's samples in, every number of docs/design.md §5, "The numbers" out."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from stabilitygate.measure.agreement import (
    accuracy_metrics,
    answer_counts,
    count_texts,
    parse_texts,
    parsed_metrics,
    ranked,
    raw_metrics,
)
from stabilitygate.measure.diagnostics import near_tie, near_tie_diagnostics, split_tie, suggestion
from stabilitygate.measure.embedder import TextEmbedder
from stabilitygate.measure.meaning import JudgmentLookup
from stabilitygate.measure.parsers import ParsedAnswer
from stabilitygate.measure.semantic_metrics import semantic_metrics
from stabilitygate.measure.tokens import divergence_token
from stabilitygate.metrics import Metrics
from stabilitygate.results import (
    AnswerCount,
    CaseMeasurement,
    CompletionCount,
    Diagnostics,
    ErrorCount,
    FingerprintCount,
)
from stabilitygate.samples import Sample
from stabilitygate.suite.model import ResolvedCase
from stabilitygate.typed_json import JSON


def _order(sample: Sample) -> tuple[int, bool, str, str]:
    """Sample order, total even for duplicate indices, so arrival order never matters."""
    return (sample.index, sample.text is None, sample.text or "", sample.error or "")


def distinct_texts(samples: Iterable[Sample]) -> dict[str, int]:
    """The successful texts of one case and their counts, in the order `measure_case` takes them."""
    return count_texts(s.text for s in sorted(samples, key=_order) if s.text is not None)


def _usage(samples: Sequence[Sample]) -> dict[str, int]:
    totals: dict[str, int] = {}
    for sample in samples:
        for key, value in (sample.usage or {}).items():
            if isinstance(value, int) and not isinstance(value, bool):
                totals[key] = totals.get(key, 0) + value
    return dict(sorted(totals.items()))


def _first_parse_error(parsed: Mapping[str, ParsedAnswer] | None) -> str | None:
    """The error of the first sample (by index) that did not parse: texts are in first-appearance order."""
    return next((answer.error for answer in (parsed or {}).values() if not answer.ok), None)


def _diagnostics(
    case: ResolvedCase,
    ok: Sequence[Sample],
    counts: Mapping[str, int],
    parsed: Mapping[str, ParsedAnswer] | None,
    answers: list[tuple[JSON, int]],
    divergence: int | None,
) -> Diagnostics:
    if not ok:
        return Diagnostics()
    modal = ranked(counts)[0][0]
    carrier = next((s for s in ok if s.text == modal and s.logprobs), None)
    tie = near_tie(carrier.logprobs or (), modal, divergence) if carrier is not None else None
    split = split_tie(carrier.logprobs or (), modal, divergence) if carrier is not None else None
    failures = sum(n for text, n in counts.items() if parsed is not None and not parsed[text].ok)
    advice = suggestion(
        samples_ok=len(ok),
        unique_completions=len(counts),
        parser=case.answer.kind if case.answer is not None else None,
        answers=answers,
        parse_failures=failures,
        first_parse_error=_first_parse_error(parsed),
        tie=tie,
        split=split,
        divergence=divergence,
    )
    return replace(near_tie_diagnostics(tie, split), suggestion=advice)


def measure_case(
    case: ResolvedCase,
    samples: Sequence[Sample],
    *,
    embedder: TextEmbedder | None,
    samples_requested: int | None = None,
    meaning: JudgmentLookup | None = None,
) -> CaseMeasurement:
    """Every number of docs/design.md §5 for one case; samples may come in any order and include failures.

    `meaning` (a case with `equivalence:`): the entailment judgments its clusters are built from.
    """
    ordered = sorted(samples, key=_order)
    ok = [s for s in ordered if s.text is not None]
    failed = [s for s in ordered if s.text is None]
    requested = samples_requested if samples_requested is not None else max(case.samples, len(ordered))
    counts = count_texts(s.text for s in ok if s.text is not None)
    total = len(ok)
    notes: list[str] = []
    if len(ordered) < requested:
        notes.append(f"only {len(ordered)} of {requested} requested samples were drawn")

    parsed = parse_texts(case.answer, counts) if case.answer is not None else None
    answers: list[tuple[JSON, int]] = []
    agreement = Metrics()
    if case.answer is not None and parsed is not None:
        agreement = parsed_metrics(case.answer, parsed, counts)
        answers = ranked(answer_counts(parsed, counts))
        if agreement.parse_failures:
            notes.append(
                f"{agreement.parse_failures} of {total} answers did not parse (first: {_first_parse_error(parsed)})"
            )
    semantic = semantic_metrics(case, counts, embedder, meaning) if total else None
    if semantic is not None:
        notes.extend(semantic.notes)
    divergence = divergence_token(counts)
    if divergence is None and len(counts) > 1:
        notes.append("the completions differ only in whitespace")

    usage = _usage(ordered)
    cut = sum(1 for s in ok if s.finish_reason == "length")
    if cut:
        notes.append(f"{cut} of {total} completions were cut at max_tokens (finish_reason length)")
    metrics = raw_metrics(counts).joined(
        agreement,
        accuracy_metrics(case.answer, case.expected, parsed, counts),
        semantic.metrics if semantic is not None else Metrics(),
        Metrics(
            divergence_token=divergence,
            prompt_tokens=usage.get("prompt_tokens"),
            completion_tokens=usage.get("completion_tokens"),
            length_cut=cut,
        ),
    )

    fingerprints = count_texts(s.fingerprint for s in ordered if s.fingerprint)
    errors = count_texts(s.error or "unknown error" for s in failed)
    return CaseMeasurement(
        id=case.id,
        samples_requested=requested,
        samples_ok=total,
        sample_errors=len(failed),
        metrics=metrics,
        completions=tuple(CompletionCount(t, n) for t, n in ranked(counts)),
        answers=tuple(AnswerCount(a, n) for a, n in answers),
        fingerprints=tuple(FingerprintCount(f, n) for f, n in ranked(fingerprints)),
        errors=tuple(ErrorCount(e, n) for e, n in ranked(errors)),
        finish_reasons=dict(sorted(count_texts(s.finish_reason for s in ok if s.finish_reason).items())),
        usage=usage,
        notes=tuple(notes),
        diagnostics=replace(
            _diagnostics(case, ok, counts, parsed, answers, divergence),
            cluster_pairs=semantic.cluster_pairs if semantic is not None else None,
            entailment_error=semantic.entailment_error if semantic is not None else None,
        ),
        request_seconds=sum(s.latency_ms or 0.0 for s in ordered) / 1000,
    )
