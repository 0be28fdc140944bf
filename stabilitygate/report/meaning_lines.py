"""Sentences for a case's details in the comment: where the cosine bar cut, what the judge cost.

Plain text: the template passes each through `safe_text.inline`, as it does the reasons (the pairs'
texts are model text, already shortened in the report).
"""

from __future__ import annotations

from stabilitygate.results import CaseMeasurement, ShownPair


def _pair(shown: ShownPair | None) -> str | None:
    if shown is None:
        return None
    first, second = shown.texts
    return f'{shown.cosine:.3f} ("{first}" / "{second}")'


def bar_cut_line(m: CaseMeasurement) -> str | None:
    """The least similar pair inside a cluster and the most similar across two, when cosine clustered."""
    pairs = m.diagnostics.cluster_pairs
    if pairs is None:
        return None
    within = _pair(pairs.least_similar_within) or "none (no cluster holds two distinct completions)"
    across = _pair(pairs.most_similar_across) or "none (one cluster)"
    return (
        f"Where the clustering bar cut: least similar pair inside a cluster {within}; "
        f"most similar pair in different clusters {across}"
    )


def entailment_line(m: CaseMeasurement) -> str | None:
    """The entailment judge's cost for the case."""
    calls = m.metrics.entailment_calls
    if calls is None:
        return None
    prompt, completion = m.metrics.entailment_prompt_tokens or 0, m.metrics.entailment_completion_tokens or 0
    judgments = "judgment" if calls == 1 else "judgments"
    return (
        f"Meanings by the entailment judge: {calls:,} {judgments} "
        f"({prompt:,} prompt + {completion:,} completion tokens)"
    )


def meaning_lines(m: CaseMeasurement) -> list[str]:
    return [line for line in (bar_cut_line(m), entailment_line(m)) if line is not None]
