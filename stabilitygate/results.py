"""The typed results of measuring and judging one case: what flows from measure to judge to report.

The run as a whole (`Report`, `CaseResult`, `RunFacts`) is in `stabilitygate.report.model`
(docs/design.md §10, "Library API"). Field names are the report JSON's keys, written and read only
by `stabilitygate.typed_json`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from pydantic.json_schema import SkipJsonSchema

from stabilitygate.against_baseline import AgainstBaseline
from stabilitygate.metrics import Agreement, Metrics, SampleCount
from stabilitygate.names import CaseId
from stabilitygate.typed_json import JSON, Count, Flag, Integer, Number, Signed, not_written, omitted_when_default

__all__ = [
    "Agreement",
    "AnswerCount",
    "CaseMeasurement",
    "CaseVerdict",
    "ClusterPairs",
    "CompletionCount",
    "Diagnostics",
    "EmbeddingFacts",
    "ErrorCount",
    "FingerprintCount",
    "Metrics",
    "ShownPair",
    "UnreadableReply",
    "VerdictName",
]

VerdictName = Literal["pass", "fail", "regressed", "warn", "new", "error", "unchanged"]


@dataclass(frozen=True)
class CompletionCount:
    text: str
    count: SampleCount
    # When the report cut the text (docs/design.md §8, "Size limits"): its whole length and sha256,
    # by which it is found in the samples file, which holds it whole.
    chars: Count | None = omitted_when_default()
    sha256: str | None = omitted_when_default()


@dataclass(frozen=True)
class AnswerCount:
    answer: JSON  # a parsed answer: a string, a number, or a JSON field's value
    count: SampleCount
    chars: Count | None = omitted_when_default()  # as for CompletionCount: set when the report cut it
    sha256: str | None = omitted_when_default()


@dataclass(frozen=True)
class FingerprintCount:
    fingerprint: str | None
    count: SampleCount


@dataclass(frozen=True)
class ErrorCount:
    error: str
    count: SampleCount


@dataclass(frozen=True)
class ShownPair:
    """Two completions (shortened) and their cosine."""

    cosine: Signed
    texts: tuple[str, str]


@dataclass(frozen=True)
class ClusterPairs:
    """Where the clustering bar cut: the least similar pair inside a cluster, the most similar across."""

    least_similar_within: ShownPair | None = omitted_when_default()
    most_similar_across: ShownPair | None = omitted_when_default()


@dataclass(frozen=True)
class UnreadableReply:
    reply: str
    count: SampleCount


@dataclass(frozen=True)
class Diagnostics:
    """What helps a person fix an unstable case (docs/design.md §5); each key only when it applies."""

    # The closest call between two tokens in the modal completion (with logprobs).
    min_margin: Number | None = omitted_when_default()
    min_margin_position: Count | None = omitted_when_default()
    min_margin_token: str | None = omitted_when_default()
    min_margin_runner_up: str | None = omitted_when_default()
    divergence_at_min_margin: Flag | None = omitted_when_default()
    suggestion: str | None = omitted_when_default()  # what to change in the prompt or the setup
    cluster_pairs: ClusterPairs | None = omitted_when_default()
    entailment_error: str | None = omitted_when_default()  # the entailment judge could not answer
    entailment_unreadable: tuple[UnreadableReply, ...] = omitted_when_default(())
    # Where the completions part ways (`divergence_token`), in the modal completion's logprobs: the
    # provider's token there, the runner-up it beat and the margin (docs/design.md §16, "Diagnosis").
    split_position: Count | None = omitted_when_default()
    split_token: str | None = omitted_when_default()
    split_runner_up: str | None = omitted_when_default()
    split_margin: Number | None = omitted_when_default()
    # The line that names the kind of instability and the remedy the numbers support.
    diagnosis: str | None = omitted_when_default()
    # With `idempotency: shared`: whether one key gave one completion.
    idempotent: Flag | None = omitted_when_default()


@dataclass(frozen=True, kw_only=True)
class CaseMeasurement:
    """Everything measured about one case (docs/design.md, "The numbers"); the report's `CaseResult`
    extends it with the judge's word."""

    id: CaseId
    samples_requested: SampleCount
    samples_ok: SampleCount
    sample_errors: SampleCount
    metrics: Metrics
    completions: tuple[CompletionCount, ...] = ()  # by count desc, then text
    answers: tuple[AnswerCount, ...] = ()  # by count desc, then answer
    fingerprints: tuple[FingerprintCount, ...] = ()
    errors: tuple[ErrorCount, ...] = ()
    finish_reasons: Mapping[str, Count] = field(default_factory=dict)
    usage: Mapping[str, Integer | None] = field(default_factory=dict)  # prompt_tokens, completion_tokens
    notes: tuple[str, ...] = ()  # human sentences: truncation, cut completions, ...
    diagnostics: Diagnostics = Diagnostics()
    # The time the case's requests took, summed (JUnit's time); never in the JSON, like every timing.
    request_seconds: SkipJsonSchema[float | None] = not_written()

    @classmethod
    def nothing(cls, case_id: str, samples_requested: int) -> CaseMeasurement:
        """The measurement of a case that was never sampled."""
        return cls(id=case_id, samples_requested=samples_requested, samples_ok=0, sample_errors=0, metrics=Metrics())


@dataclass(frozen=True)
class EmbeddingFacts:
    """The semantic layer as the report describes it.

    `texts_from_cache` is for the job summary only: the report JSON must not depend on whether the
    embedding cache was warm, so it never enters `to_json()`.
    """

    model: str | None = None
    texts_embedded: Count = 0
    max_word_pieces: Count | None = None
    truncation: str = ""
    texts_from_cache: SkipJsonSchema[int | None] = not_written()


@dataclass(frozen=True)
class CaseVerdict:
    """The judge's word on one case: the verdict, its reasons and where it stands against the baseline."""

    id: str
    verdict: VerdictName
    reasons: tuple[str, ...]
    baseline: AgainstBaseline | None = None
    primary: Agreement | None = None
