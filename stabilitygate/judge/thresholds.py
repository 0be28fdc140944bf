"""Absolute checks of one case: could it be measured at all, and does it meet its thresholds.

Also decides each case's primary agreement metric, which the thresholds and the baseline
comparison share (DESIGN section 6).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from stabilitygate.results import CaseMeasurement
from stabilitygate.suite.model import ResolvedCase

#: Shares are compared with this slack so that 9/10 meets min_agreement 0.9 although 0.9 * 10 is
#: 9.000000000000002 in binary floating point.
EPSILON = 1e-9

METRIC_LABELS = {
    "parsed_agreement": "agreement",
    "semantic_agreement": "semantic agreement",
    "mode_share": "mode share",
}


@dataclass(frozen=True)
class Agreement:
    """The primary agreement metric of a case: its name, value and the counts behind it."""

    metric: str  # parsed_agreement | semantic_agreement | mode_share
    k: int
    n: int

    @property
    def value(self) -> float:
        return self.k / self.n if self.n else 0.0

    @property
    def label(self) -> str:
        return METRIC_LABELS[self.metric]

    def to_json(self) -> dict[str, Any]:
        return {"metric": self.metric, "k": self.k, "n": self.n}


def primary_agreement(case: ResolvedCase, m: CaseMeasurement) -> Agreement | None:
    """parsed_agreement with a parser, else semantic_agreement when measured, else mode_share."""
    n = m.samples_ok
    if n <= 0:
        return None
    if case.answer is not None:
        k = int(m.answers[0]["count"]) if m.answers else 0
        return Agreement("parsed_agreement", k, n)
    semantic = m.metrics.get("semantic_agreement")
    if semantic is not None:
        return Agreement("semantic_agreement", round(float(semantic) * n), n)
    k = int(m.completions[0]["count"]) if m.completions else 0
    return Agreement("mode_share", k, n)


def measurement_error(case: ResolvedCase, m: CaseMeasurement) -> str | None:
    """Why the case could not be measured, or None when it could."""
    allowed = case.thresholds.max_sample_errors
    if allowed is None:
        allowed = m.samples_requested // 2  # "more than half of the samples" is an error
    if m.sample_errors > allowed:
        return (
            f"{m.sample_errors} of {m.samples_requested} samples failed, more than the {allowed} allowed{_top_error(m)}"
        )
    if m.samples_ok < 2:
        return (
            f"only {m.samples_ok} of {m.samples_requested} samples succeeded: at least 2 are needed "
            f"to measure stability{_top_error(m)}"
        )
    return None


def _top_error(m: CaseMeasurement) -> str:
    if not m.errors:
        return ""
    top = m.errors[0]
    text = " ".join(str(top.get("error", "")).split())
    if len(text) > 160:
        text = text[:159] + "…"
    return f" (most common error, {top.get('count', '?')}x: {text})"


@dataclass(frozen=True)
class ThresholdCheck:
    violations: list[str]  # one sentence per threshold violated: the case fails
    met: list[str]  # short phrases for thresholds met, e.g. "unique 2 ≤ 3"
    skipped: list[str]  # sentences for thresholds whose metric was not measured


def check_thresholds(case: ResolvedCase, m: CaseMeasurement) -> ThresholdCheck:
    t = case.thresholds
    metrics = m.metrics
    n = m.samples_ok
    violations: list[str] = []
    met: list[str] = []
    skipped: list[str] = []

    def check(
        limit: float | None,
        name: str,
        value: Any,
        bad: Callable[[float, float], bool],
        violation: Callable[[float, float], str],
        short: Callable[[float, float], str],
        why_null: str,
    ) -> None:
        if limit is None:
            return
        if value is None:
            skipped.append(f"{name} not checked: {why_null}")
        elif bad(float(value), float(limit)):
            violations.append(violation(float(value), float(limit)))
        else:
            met.append(short(float(value), float(limit)))

    check(
        t.max_unique,
        "max_unique",
        metrics.get("unique_completions"),
        lambda v, lim: v > lim,
        lambda v, lim: f"{int(v)} unique completions of {n} where at most {int(lim)} are allowed (max_unique)",
        lambda v, lim: f"unique {int(v)} ≤ {int(lim)}",
        "no completions were measured",
    )
    mode_k = int(m.completions[0]["count"]) if m.completions else 0
    check(
        t.min_mode_share,
        "min_mode_share",
        metrics.get("mode_share"),
        _below,
        lambda v, lim: f"the most common completion is {mode_k}/{n} ({v:.2f}), below min_mode_share {lim:.2f}",
        lambda v, lim: f"mode share {v:.2f} ≥ {lim:.2f}",
        "no completions were measured",
    )
    primary = primary_agreement(case, m)
    agreement_value = metrics.get(primary.metric) if primary is not None else None
    label = primary.label if primary is not None else "agreement"
    counts = f"{primary.k}/{primary.n}" if primary is not None else "?"
    check(
        t.min_agreement,
        "min_agreement",
        agreement_value,
        _below,
        lambda v, lim: f"{label} {counts} ({v:.2f}), below min_agreement {lim:.2f}",
        lambda v, lim: f"{label} {v:.2f} ≥ {lim:.2f}",
        "no agreement metric was measured",
    )
    check(
        t.min_cosine,
        "min_cosine",
        metrics.get("cosine_min"),
        _below,
        lambda v, lim: f"the least similar pair of completions has cosine {v:.3f}, below min_cosine {lim:.3f}",
        lambda v, lim: f"min cosine {v:.3f} ≥ {lim:.3f}",
        "the semantic layer is off",
    )
    check(
        t.max_semantic_clusters,
        "max_semantic_clusters",
        metrics.get("semantic_clusters"),
        lambda v, lim: v > lim,
        lambda v, lim: f"{int(v)} distinct meanings (semantic clusters) where at most {int(lim)} are allowed",
        lambda v, lim: f"clusters {int(v)} ≤ {int(lim)}",
        "the semantic layer is off",
    )
    check(
        t.min_accuracy,
        "min_accuracy",
        metrics.get("accuracy"),
        _below,
        lambda v, lim: f"accuracy {round(v * n)}/{n} ({v:.2f}), below min_accuracy {lim:.2f}",
        lambda v, lim: f"accuracy {v:.2f} ≥ {lim:.2f}",
        "the case has no `expected` answer",
    )
    check(
        t.min_schema_valid,
        "min_schema_valid",
        metrics.get("schema_valid_share"),
        _below,
        lambda v, lim: f"{round(v * n)}/{n} answers ({v:.2f}) meet the schema, below min_schema_valid {lim:.2f}",
        lambda v, lim: f"schema valid {v:.2f} ≥ {lim:.2f}",
        "the case has no `schema`",
    )
    return ThresholdCheck(violations, met, skipped)


def _below(value: float, limit: float) -> bool:
    return value < limit - EPSILON
