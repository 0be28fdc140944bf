"""Plain data passed between the pipeline's stages: measure -> judge -> report (DESIGN section 9)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from stabilitygate.plain import REPORT_DECIMALS  # noqa: F401 - re-exported for older imports

VerdictName = Literal["pass", "fail", "regressed", "new", "error"]


@dataclass(frozen=True)
class CaseMeasurement:
    """Everything measured about one case (DESIGN section 5), JSON-ready."""

    id: str
    samples_requested: int
    samples_ok: int
    sample_errors: int
    metrics: dict[str, Any]  # the keys of DESIGN section 5 (+ schema_valid_share, token counts)
    completions: list[dict[str, Any]]  # [{"text", "count"}] by count desc, then text
    answers: list[dict[str, Any]]  # [{"answer", "count"}] by count desc, then answer
    fingerprints: list[dict[str, Any]]  # [{"fingerprint", "count"}]
    errors: list[dict[str, Any]] = field(default_factory=list)  # [{"error", "count"}]
    finish_reasons: dict[str, int] = field(default_factory=dict)
    usage: dict[str, int] = field(default_factory=dict)  # prompt_tokens, completion_tokens
    notes: list[str] = field(default_factory=list)  # human sentences: truncation, cut completions, ...
    diagnostics: dict[str, Any] = field(default_factory=dict)  # logprob margins, suggestions, ...

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class CaseVerdict:
    id: str
    verdict: VerdictName
    reasons: list[str]
    baseline: dict[str, Any] | None = None  # the comparison: baseline values, p-values, changes

    def to_json(self) -> dict[str, Any]:
        return asdict(self)
