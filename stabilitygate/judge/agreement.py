"""Each case's primary agreement metric, which the thresholds, the baseline comparison and the
report share (docs/design.md, "Judging").

The judge computes it once per case and carries it in `CaseVerdict.primary`.
"""

from __future__ import annotations

from collections.abc import Sequence

from stabilitygate.results import Agreement, AnswerCount, CaseMeasurement, CompletionCount
from stabilitygate.suite.model import ResolvedCase


def primary_agreement(case: ResolvedCase, m: CaseMeasurement) -> Agreement | None:
    """parsed_agreement with a parser, else semantic_agreement when measured, else mode_share."""
    n = m.samples_ok
    if n <= 0:
        return None
    if case.answer is not None:
        return Agreement("parsed_agreement", _top_count(m.answers), n)
    semantic = m.metrics.semantic_agreement
    if semantic is not None:
        return Agreement("semantic_agreement", round(semantic * n), n)
    return Agreement("mode_share", _top_count(m.completions), n)


def _top_count(rows: Sequence[AnswerCount] | Sequence[CompletionCount]) -> int:
    """The count of the most common row; 0 when there is none (every parse failed)."""
    return rows[0].count if rows else 0
