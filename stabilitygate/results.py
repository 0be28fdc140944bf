"""The typed results of measuring and judging one case: what flows from measure to judge to report.

The run as a whole (`Report`, `CaseResult`, `RunFacts`) is in `stabilitygate.report.model`
(docs/design.md §10, "Library API").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

__all__ = ["Agreement", "CaseMeasurement", "CaseVerdict", "VerdictName"]

VerdictName = Literal["pass", "fail", "regressed", "warn", "new", "error", "unchanged"]
JSON = Any  # a JSON value: what a parsed answer, a metric or a comparison entry can be

METRIC_LABELS = {
    "parsed_agreement": "agreement",
    "semantic_agreement": "semantic agreement",
    "mode_share": "mode share",
}


@dataclass(frozen=True)
class Agreement:
    """A case's primary agreement metric (docs/design.md, "Judging"): its name and the counts behind it."""

    metric: str  # parsed_agreement | semantic_agreement | mode_share
    k: int
    n: int

    @property
    def value(self) -> float:
        return self.k / self.n if self.n else 0.0

    @property
    def label(self) -> str:
        return METRIC_LABELS[self.metric]

    def to_json(self) -> dict[str, JSON]:
        return {"metric": self.metric, "k": self.k, "n": self.n}

    @classmethod
    def from_json(cls, data: Mapping[str, JSON] | None) -> Agreement | None:
        return None if data is None else cls(str(data["metric"]), int(data["k"]), int(data["n"]))


@dataclass(frozen=True)
class CaseMeasurement:
    """Everything measured about one case (docs/design.md, "The numbers"), JSON-ready."""

    id: str
    samples_requested: int
    samples_ok: int
    sample_errors: int
    metrics: dict[str, JSON]  # the metric keys (+ schema_valid_share, token counts)
    completions: list[dict[str, JSON]]  # [{"text", "count"}] by count desc, then text
    answers: list[dict[str, JSON]]  # [{"answer", "count"}] by count desc, then answer
    fingerprints: list[dict[str, JSON]]  # [{"fingerprint", "count"}]
    errors: list[dict[str, JSON]] = field(default_factory=list)  # [{"error", "count"}]
    finish_reasons: dict[str, int] = field(default_factory=dict)
    usage: dict[str, int] = field(default_factory=dict)  # prompt_tokens, completion_tokens
    notes: list[str] = field(default_factory=list)  # human sentences: truncation, cut completions, ...
    diagnostics: dict[str, JSON] = field(default_factory=dict)  # logprob margins, suggestions, ...

    @classmethod
    def nothing(cls, case_id: str, samples_requested: int) -> CaseMeasurement:
        """The measurement of a case that was never sampled."""
        return cls(case_id, samples_requested, 0, 0, {}, [], [], [])

    def to_json(self) -> dict[str, JSON]:
        return asdict(self)


@dataclass(frozen=True)
class CaseVerdict:
    """The judge's word on one case: the verdict, its reasons and the comparison with the baseline."""

    id: str
    verdict: VerdictName
    reasons: list[str]
    baseline: dict[str, JSON] | None = None  # the comparison: baseline values, p-values, changes
    primary: Agreement | None = None

    def to_json(self) -> dict[str, JSON]:
        data = asdict(self)
        data["primary"] = self.primary.to_json() if self.primary is not None else None
        return data
