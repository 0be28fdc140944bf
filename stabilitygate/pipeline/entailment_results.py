"""What the entailment judge adds to a case's results: its cost, its unreadable replies, its failures.

A judge that failed after its retries leaves the case without clusters: the case is `error` (could
not measure), never measured by cosine instead (docs/design.md §5).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from stabilitygate.against_baseline import NotCompared
from stabilitygate.report.entailment_facts import EntailmentFacts
from stabilitygate.results import CaseMeasurement, CaseVerdict, UnreadableReply

if TYPE_CHECKING:
    from stabilitygate.pipeline.meanings import EntailmentCost, Meanings

UNREADABLE_SHOWN = 5  # distinct unreadable replies kept in the report


def with_entailment_cost(m: CaseMeasurement, cost: EntailmentCost | None) -> CaseMeasurement:
    """The judge's calls and tokens as metrics; its unreadable replies as a note and a diagnostic."""
    metrics = replace(
        m.metrics,
        entailment_calls=cost.calls if cost is not None else 0,
        entailment_prompt_tokens=cost.prompt_tokens if cost is not None else 0,
        entailment_completion_tokens=cost.completion_tokens if cost is not None else 0,
    )
    notes, diagnostics = list(m.notes), m.diagnostics
    if cost is not None and cost.unreadable:
        count = sum(n for _, n in cost.unreadable)
        first = cost.unreadable[0][0]
        notes.append(
            f"{count} of the judge's replies named none of entailment, neutral, contradiction and were read "
            f'as "not the same meaning" (first: "{" ".join(first.split())[:80]}")'
        )
        shown = tuple(UnreadableReply(r, n) for r, n in cost.unreadable[:UNREADABLE_SHOWN])
        diagnostics = replace(diagnostics, entailment_unreadable=shown)
    return replace(m, metrics=metrics, notes=tuple(notes), diagnostics=diagnostics)


def with_entailment_errors(verdicts: Sequence[CaseVerdict], failed: Mapping[str, str]) -> list[CaseVerdict]:
    """Cases whose judge could not answer (their clusters, or the drift rule's question) become `error`."""
    out = []
    for verdict in verdicts:
        why = failed.get(verdict.id)
        if why is None or verdict.verdict == "error":
            out.append(verdict)
            continue
        recorded = verdict.baseline.hash if verdict.baseline is not None else None
        reasons = (f"could not measure the meanings: {why}", *verdict.reasons)
        out.append(CaseVerdict(verdict.id, "error", reasons, NotCompared("not_measured", recorded), verdict.primary))
    return out


def entailment_facts(meanings: Meanings | None, measurements: Sequence[CaseMeasurement]) -> EntailmentFacts | None:
    """The run's judge totals over its judged cases; None when no case has a judge."""
    if meanings is None:
        return None
    judged = [m for m in measurements if m.id in meanings.keys]
    return EntailmentFacts.of_cases(
        [m.metrics for m in judged],
        unreadable=sum(n for cost in meanings.costs.values() for _, n in cost.unreadable),
        failed=len(meanings.failed),
        requests=meanings.session.requests,
        from_record=meanings.from_record,
        from_cache=meanings.session.from_cache,
    )
