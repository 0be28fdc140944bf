"""Absolute checks of one case: could it be measured at all, and does it meet its thresholds."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from stabilitygate.plain import round_float
from stabilitygate.results import Agreement, CaseMeasurement
from stabilitygate.sampling.causes import most_common_cause
from stabilitygate.suite.model import ResolvedCase

#: Shares are compared with this slack so that 9/10 meets min_agreement 0.9 although 0.9 * 10 is
#: 9.000000000000002 in binary floating point.
EPSILON = 1e-9

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
    cause = most_common_cause(m.errors)
    return "" if cause is None else f" (most common error, {cause.count}x: {cause.error})"


# --- thresholds -----------------------------------------------------------------------------------

#: What a rule's `metric` names besides a `Metrics` key: the share of answers that parsed, and the
#: case's primary agreement metric, whichever it is.
PARSED, PRIMARY = "parsed", "primary"


@dataclass(frozen=True)
class Rule:
    """One threshold of the suite: its key, the number it bounds, which way, and how to word both.

    The words are templates over the value `v`, the limit `lim` and the case's counts: `n` (successful
    samples), `count` (round(v * n)), `mode` (the most common completion's count), `parsed`, and the
    primary agreement's `label` and `agreement` (k/n).
    """

    name: str  # the suite's key, e.g. "max_unique"
    metric: str  # a Metrics key, PARSED or PRIMARY
    at_most: bool  # max_* bounds from above (exact counts); min_* from below (shares, with EPSILON)
    violation: str
    met: str
    why_unmeasured: str

    def violated(self, value: float, limit: float) -> bool:
        return value > limit if self.at_most else below(value, limit)


#: Every threshold, in the order a case's are told: min_parsed first, since when answers do not parse
#: the other numbers follow from it (docs/design.md §6, "Judging").
RULES = (
    Rule("min_parsed", PARSED, False,
         "{parsed}/{n} answers parsed ({v:.2f}), below min_parsed {lim:.2f}: check the parser against the completions",
         "parsed {v:.2f} ≥ {lim:.2f}", "no answers were parsed"),
    Rule("max_unique", "unique_completions", True,
         "{v:.0f} unique completions of {n} where at most {lim:.0f} are allowed (max_unique)",
         "unique {v:.0f} ≤ {lim:.0f}", "no completions were measured"),
    Rule("min_mode_share", "mode_share", False,
         "the most common completion is {mode}/{n} ({v:.2f}), below min_mode_share {lim:.2f}",
         "mode share {v:.2f} ≥ {lim:.2f}", "no completions were measured"),
    Rule("min_agreement", PRIMARY, False, "{label} {agreement} ({v:.2f}), below min_agreement {lim:.2f}",
         "{label} {v:.2f} ≥ {lim:.2f}", "no agreement metric was measured"),
    Rule("min_cosine", "cosine_min", False,
         "the least similar pair of completions has cosine {v:.3f}, below min_cosine {lim:.3f}",
         "min cosine {v:.3f} ≥ {lim:.3f}", "the semantic layer is off"),
    Rule("max_semantic_clusters", "semantic_clusters", True,
         "{v:.0f} distinct meanings (semantic clusters) where at most {lim:.0f} are allowed",
         "clusters {v:.0f} ≤ {lim:.0f}", "the semantic layer is off"),
    Rule("min_accuracy", "accuracy", False, "accuracy {count}/{n} ({v:.2f}), below min_accuracy {lim:.2f}",
         "accuracy {v:.2f} ≥ {lim:.2f}", "the case has no `expected` answer"),
    Rule("min_schema_valid", "schema_valid_share", False,
         "{count}/{n} answers ({v:.2f}) meet the schema, below min_schema_valid {lim:.2f}",
         "schema valid {v:.2f} ≥ {lim:.2f}", "the case has no `schema`"),
)  # fmt: skip
RULE = {rule.name: rule for rule in RULES}


@dataclass(frozen=True)
class ThresholdCheck:
    violations: list[str]  # one sentence per threshold violated: the case fails
    met: list[str]  # short phrases for thresholds met, e.g. "unique 2 ≤ 3"
    skipped: list[str]  # sentences for thresholds whose metric was not measured


@dataclass(frozen=True)
class Limit:
    """One threshold set on the case, with the measured value it bounds."""

    rule: Rule
    limit: float
    value: float | None  # None: the metric was not measured
    quiet: bool = False  # a default the suite did not set: told only when violated


def below(share: float, limit: float) -> bool:
    """Whether a measured share violates a `min_*` threshold (with EPSILON's slack)."""
    return share < limit - EPSILON


def check_thresholds(case: ResolvedCase, m: CaseMeasurement, primary: Agreement | None) -> ThresholdCheck:
    """Every threshold set on the case, in the order of RULES: violated, met, or not checked."""
    violations: list[str] = []
    met: list[str] = []
    skipped: list[str] = []
    counts = _counts(m, primary)
    for found in _limits(case, m, primary):
        rule, value, limit = found.rule, found.value, found.limit
        if value is None:
            if not found.quiet:
                skipped.append(f"{rule.name} not checked: {rule.why_unmeasured}")
        elif rule.violated(value, limit):
            violations.append(rule.violation.format(v=value, lim=limit, count=round(value * m.samples_ok), **counts))
        elif not found.quiet:
            met.append(rule.met.format(v=value, lim=limit, **counts))
    return ThresholdCheck(violations, met, skipped)


def _limits(case: ResolvedCase, m: CaseMeasurement, primary: Agreement | None) -> list[Limit]:
    """The thresholds the case sets (unset ones are left out), each paired with its metric."""
    t = case.thresholds
    found = []
    for rule in RULES:
        if rule.name == "min_parsed":  # on by default for a case with a parser: one that never matches must fail
            if case.answer is not None and t.parsed_floor > 0:
                found.append(Limit(rule, t.parsed_floor, _value(rule, m, primary), quiet=t.min_parsed is None))
            continue
        limit = getattr(t, rule.name)
        if limit is not None:
            found.append(Limit(rule, float(limit), _value(rule, m, primary)))
    return found


def _value(rule: Rule, m: CaseMeasurement, primary: Agreement | None) -> float | None:
    if rule.metric == PARSED:
        parsed = parsed_count(m)
        return None if parsed is None or m.samples_ok == 0 else round_float(parsed / m.samples_ok)
    if rule.metric == PRIMARY:
        return m.metrics.number(primary.metric) if primary is not None else None
    return m.metrics.number(rule.metric)


def _counts(m: CaseMeasurement, primary: Agreement | None) -> dict[str, object]:
    """The counts a rule's words may name besides its value and limit."""
    return {
        "n": m.samples_ok,
        "mode": m.completions[0].count if m.completions else 0,
        "parsed": parsed_count(m),
        "label": primary.label if primary is not None else "agreement",
        "agreement": f"{primary.k}/{primary.n}" if primary is not None else "?",
    }


def parsed_count(m: CaseMeasurement) -> int | None:
    """Samples whose answer parsed (and met `schema`); None when parsing was not measured."""
    failures = m.metrics.parse_failures
    return None if failures is None else m.samples_ok - failures


# --- failed already -------------------------------------------------------------------------------


def certain_violation(case: ResolvedCase, completions: Counter[str], drawn: int) -> str | None:
    """Why the case fails a threshold whatever its remaining samples say, after `drawn` samples with
    these completions (the sampler's early stop); None while it still can pass. Two rules can tell:
    distinct completions only grow, and the mode share at best gains every remaining sample."""
    t = case.thresholds
    if t.max_unique is not None and RULE["max_unique"].violated(len(completions), t.max_unique):
        return f"{len(completions)} distinct completions after {drawn} samples, above max_unique {t.max_unique}"
    if t.min_mode_share is not None and completions:
        remaining = max(case.samples - drawn, 0)
        best = (completions.most_common(1)[0][1] + remaining) / (completions.total() + remaining)
        if RULE["min_mode_share"].violated(best, t.min_mode_share):
            return (
                f"mode share can reach at most {best:.2f} after {drawn} samples, "
                f"below min_mode_share {t.min_mode_share}"
            )
    return None
