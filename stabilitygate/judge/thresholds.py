"""Absolute checks of one case: could it be measured at all, and does it meet its thresholds."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from stabilitygate.judge.agreement import primary_agreement
from stabilitygate.plain import round_float
from stabilitygate.results import Agreement, CaseMeasurement
from stabilitygate.suite.model import ResolvedCase, Thresholds

# `primary_agreement` is re-exported until report/json_report.py reads `CaseVerdict.primary`.
__all__ = [
    "EPSILON",
    "ThresholdCheck",
    "below",
    "check_thresholds",
    "measurement_error",
    "parsed_count",
    "primary_agreement",
]

#: Shares are compared with this slack so that 9/10 meets min_agreement 0.9 although 0.9 * 10 is
#: 9.000000000000002 in binary floating point.
EPSILON = 1e-9

Sentence = Callable[[float, float], str]  # (value, limit) -> words


# --- could the case be measured -------------------------------------------------------------------


def measurement_error(case: ResolvedCase, m: CaseMeasurement) -> str | None:
    """Why the case could not be measured, or None when it could."""
    allowed = _allowed_sample_errors(case, m)
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


def _allowed_sample_errors(case: ResolvedCase, m: CaseMeasurement) -> int:
    """max_sample_errors, else half the samples: "more than half of the samples" is an error."""
    allowed = case.thresholds.max_sample_errors
    return m.samples_requested // 2 if allowed is None else allowed


def _top_error(m: CaseMeasurement) -> str:
    if not m.errors:
        return ""
    top = m.errors[0]
    text = " ".join(top.error.split())
    if len(text) > 160:
        text = text[:159] + "…"
    return f" (most common error, {top.count}x: {text})"


# --- thresholds -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ThresholdCheck:
    violations: list[str]  # one sentence per threshold violated: the case fails
    met: list[str]  # short phrases for thresholds met, e.g. "unique 2 ≤ 3"
    skipped: list[str]  # sentences for thresholds whose metric was not measured


@dataclass(frozen=True)
class Limit:
    """One threshold set on the case, with the measured value it bounds and how to word both."""

    name: str  # the suite's key, e.g. "max_unique"
    limit: float
    value: float | None  # None: the metric was not measured
    at_most: bool  # max_* bounds from above (exact counts); min_* from below (shares, with EPSILON)
    violation: Sentence
    met: Sentence
    why_unmeasured: str
    quiet: bool = False  # a default the suite did not set: told only when violated

    def violated(self, value: float) -> bool:
        return value > self.limit if self.at_most else below(value, self.limit)


def below(share: float, limit: float) -> bool:
    """Whether a measured share violates a `min_*` threshold (with EPSILON's slack)."""
    return share < limit - EPSILON


def check_thresholds(case: ResolvedCase, m: CaseMeasurement, primary: Agreement | None) -> ThresholdCheck:
    """Every threshold set on the case, in the suite's order: violated, met, or not checked."""
    violations: list[str] = []
    met: list[str] = []
    skipped: list[str] = []
    for limit in _limits(case, m, primary):
        if limit.value is None:
            if not limit.quiet:
                skipped.append(f"{limit.name} not checked: {limit.why_unmeasured}")
        elif limit.violated(limit.value):
            violations.append(limit.violation(limit.value, limit.limit))
        elif not limit.quiet:
            met.append(limit.met(limit.value, limit.limit))
    return ThresholdCheck(violations, met, skipped)


def _limits(case: ResolvedCase, m: CaseMeasurement, primary: Agreement | None) -> list[Limit]:
    """The thresholds the case sets (unset ones are left out), each paired with its metric."""
    t = case.thresholds
    candidates = [
        _min_parsed(case, m),  # first: when answers do not parse, the other numbers follow from it
        _max_unique(t, m),
        _min_mode_share(t, m),
        _min_agreement(t, m, primary),
        _min_cosine(t, m),
        _max_semantic_clusters(t, m),
        _min_accuracy(t, m),
        _min_schema_valid(t, m),
    ]
    return [limit for limit in candidates if limit is not None]


def _measured(m: CaseMeasurement, metric: str) -> float | None:
    return m.metrics.number(metric)


def parsed_count(m: CaseMeasurement) -> int | None:
    """Samples whose answer parsed (and met `schema`); None when parsing was not measured."""
    failures = m.metrics.parse_failures
    return None if failures is None else m.samples_ok - failures


def _min_parsed(case: ResolvedCase, m: CaseMeasurement) -> Limit | None:
    """On by default for a case with a parser: a parser that never matches must fail, never pass."""
    t = case.thresholds
    if case.answer is None or t.parsed_floor <= 0:
        return None
    parsed, n = parsed_count(m), m.samples_ok
    return Limit(
        "min_parsed",
        t.parsed_floor,
        None if parsed is None or n == 0 else round_float(parsed / n),
        at_most=False,
        violation=lambda v, lim: (
            f"{parsed}/{n} answers parsed ({v:.2f}), below min_parsed {lim:.2f}: "
            "check the parser against the completions"
        ),
        met=lambda v, lim: f"parsed {v:.2f} ≥ {lim:.2f}",
        why_unmeasured="no answers were parsed",
        quiet=t.min_parsed is None,
    )


def _max_unique(t: Thresholds, m: CaseMeasurement) -> Limit | None:
    if t.max_unique is None:
        return None
    n = m.samples_ok
    return Limit(
        "max_unique",
        float(t.max_unique),
        _measured(m, "unique_completions"),
        at_most=True,
        violation=lambda v, lim: (
            f"{int(v)} unique completions of {n} where at most {int(lim)} are allowed (max_unique)"
        ),
        met=lambda v, lim: f"unique {int(v)} ≤ {int(lim)}",
        why_unmeasured="no completions were measured",
    )


def _min_mode_share(t: Thresholds, m: CaseMeasurement) -> Limit | None:
    if t.min_mode_share is None:
        return None
    counts = f"{m.completions[0].count if m.completions else 0}/{m.samples_ok}"
    return Limit(
        "min_mode_share",
        t.min_mode_share,
        _measured(m, "mode_share"),
        at_most=False,
        violation=lambda v, lim: f"the most common completion is {counts} ({v:.2f}), below min_mode_share {lim:.2f}",
        met=lambda v, lim: f"mode share {v:.2f} ≥ {lim:.2f}",
        why_unmeasured="no completions were measured",
    )


def _min_agreement(t: Thresholds, m: CaseMeasurement, primary: Agreement | None) -> Limit | None:
    """min_agreement bounds the case's primary agreement metric, whichever it is."""
    if t.min_agreement is None:
        return None
    label = primary.label if primary is not None else "agreement"
    counts = f"{primary.k}/{primary.n}" if primary is not None else "?"
    return Limit(
        "min_agreement",
        t.min_agreement,
        _measured(m, primary.metric) if primary is not None else None,
        at_most=False,
        violation=lambda v, lim: f"{label} {counts} ({v:.2f}), below min_agreement {lim:.2f}",
        met=lambda v, lim: f"{label} {v:.2f} ≥ {lim:.2f}",
        why_unmeasured="no agreement metric was measured",
    )


def _min_cosine(t: Thresholds, m: CaseMeasurement) -> Limit | None:
    if t.min_cosine is None:
        return None
    return Limit(
        "min_cosine",
        t.min_cosine,
        _measured(m, "cosine_min"),
        at_most=False,
        violation=lambda v, lim: (
            f"the least similar pair of completions has cosine {v:.3f}, below min_cosine {lim:.3f}"
        ),
        met=lambda v, lim: f"min cosine {v:.3f} ≥ {lim:.3f}",
        why_unmeasured="the semantic layer is off",
    )


def _max_semantic_clusters(t: Thresholds, m: CaseMeasurement) -> Limit | None:
    if t.max_semantic_clusters is None:
        return None
    return Limit(
        "max_semantic_clusters",
        float(t.max_semantic_clusters),
        _measured(m, "semantic_clusters"),
        at_most=True,
        violation=lambda v, lim: f"{int(v)} distinct meanings (semantic clusters) where at most {int(lim)} are allowed",
        met=lambda v, lim: f"clusters {int(v)} ≤ {int(lim)}",
        why_unmeasured="the semantic layer is off",
    )


def _min_accuracy(t: Thresholds, m: CaseMeasurement) -> Limit | None:
    if t.min_accuracy is None:
        return None
    n = m.samples_ok
    return Limit(
        "min_accuracy",
        t.min_accuracy,
        _measured(m, "accuracy"),
        at_most=False,
        violation=lambda v, lim: f"accuracy {round(v * n)}/{n} ({v:.2f}), below min_accuracy {lim:.2f}",
        met=lambda v, lim: f"accuracy {v:.2f} ≥ {lim:.2f}",
        why_unmeasured="the case has no `expected` answer",
    )


def _min_schema_valid(t: Thresholds, m: CaseMeasurement) -> Limit | None:
    if t.min_schema_valid is None:
        return None
    n = m.samples_ok
    return Limit(
        "min_schema_valid",
        t.min_schema_valid,
        _measured(m, "schema_valid_share"),
        at_most=False,
        violation=lambda v, lim: (
            f"{round(v * n)}/{n} answers ({v:.2f}) meet the schema, below min_schema_valid {lim:.2f}"
        ),
        met=lambda v, lim: f"schema valid {v:.2f} ≥ {lim:.2f}",
        why_unmeasured="the case has no `schema`",
    )
