"""A case's numbers (docs/design.md §5, "The numbers") and its primary agreement metric, typed."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Annotated, Final, Literal

from pydantic import Field

from stabilitygate.typed_json import Count, Flag, Number, Share, Signed, fields_of, omitted_when_default

__all__ = ["MAX_SAMPLES", "METRIC_LABELS", "Agreement", "MetricName", "Metrics", "SampleCount"]

#: The most samples a case may draw (suite/model.py's bound), so the most any count of samples can be:
#: a baseline or report claiming more is refused before an exact test tries to weigh it.
MAX_SAMPLES: Final = 100_000
SampleCount = Annotated[int, Field(ge=0, le=MAX_SAMPLES, strict=True)]

MetricName = Literal["parsed_agreement", "semantic_agreement", "mode_share"]

METRIC_LABELS: dict[MetricName, str] = {
    "parsed_agreement": "agreement",
    "semantic_agreement": "semantic agreement",
    "mode_share": "mode share",
}


@dataclass(frozen=True)
class Agreement:
    """A case's primary agreement metric (docs/design.md, "Judging"): its name and the counts behind it
    (k of n samples; k is at most n)."""

    metric: MetricName
    k: SampleCount
    n: SampleCount

    def __post_init__(self) -> None:
        if self.k > self.n:
            raise ValueError(f"k ({self.k}) > n ({self.n})")

    @property
    def value(self) -> float:
        return self.k / self.n if self.n else 0.0

    @property
    def label(self) -> str:
        return METRIC_LABELS[self.metric]


@dataclass(frozen=True)
class Metrics:
    """Every number of docs/design.md §5 for one case; None: not measured for this case."""

    unique_completions: Count | None = None
    mode_share: Share | None = None
    tar_raw: Flag | None = None
    parsed_agreement: Share | None = None
    tar_parsed: Flag | None = None
    parse_failures: Count | None = None
    cosine_min: Signed | None = None
    cosine_mean: Signed | None = None
    cosine_std: Number | None = None
    semantic_clusters: Count | None = None
    semantic_agreement: Share | None = None
    semantic_entropy: Number | None = None
    divergence_token: Count | None = None
    accuracy: Share | None = None
    any_correct: Flag | None = None
    all_correct: Flag | None = None
    schema_valid_share: Share | None = None
    prompt_tokens: Count | None = None
    completion_tokens: Count | None = None
    length_cut: Count | None = None
    # Only cosine-clustered cases have these: where the clustering bar cut.
    cluster_cosine_min_within: Signed | None = omitted_when_default()
    cluster_cosine_max_across: Signed | None = omitted_when_default()
    # Only cases with an entailment judge (`equivalence: {judge: ...}`): what their meanings cost.
    entailment_calls: Count | None = omitted_when_default()
    entailment_prompt_tokens: Count | None = omitted_when_default()
    entailment_completion_tokens: Count | None = omitted_when_default()

    def joined(self, *parts: Metrics) -> Metrics:
        """These numbers with those the partial `parts` set (each measuring step sets only its own
        fields and leaves the rest None)."""
        joined = self
        for part in parts:
            joined = replace(joined, **{name: value for name, value in fields_of(part).items() if value is not None})
        return joined

    def number(self, name: str) -> float | None:
        """The metric `name` as a number (a threshold or the primary metric named by a variable)."""
        value = getattr(self, name)
        return None if value is None else float(value)
