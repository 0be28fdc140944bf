"""Suite-level numbers: TARr@N, TARa@N and the best/worst possible accuracy (docs/design.md §5, "The numbers")."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from stabilitygate.plain import round_optional
from stabilitygate.results import CaseMeasurement
from stabilitygate.suite.model import ResolvedCase
from stabilitygate.typed_json import Count, Share, Signed


@dataclass(frozen=True, kw_only=True)
class SuiteNumbers:
    """The suite-level numbers of the report's summary (`Summary` has these fields); None: no case could say."""

    tar_raw: Share | None = None
    tar_parsed: Share | None = None
    best_possible_accuracy: Share | None = None
    worst_possible_accuracy: Share | None = None
    accuracy_spread: Signed | None = None
    samples_requested: Count | None = None
    samples_ok: Count | None = None
    sample_errors: Count | None = None
    prompt_tokens: Count | None = None
    completion_tokens: Count | None = None


def _share(flags: Sequence[bool | None]) -> float | None:
    """Share of True among the measured values (None entries: the case could not say)."""
    known = [bool(f) for f in flags if f is not None]
    return sum(known) / len(known) if known else None


def suite_summary(measurements: Sequence[CaseMeasurement], cases: Sequence[ResolvedCase]) -> SuiteNumbers:
    """Shares over cases; a case with no successful sample is left out of each share's denominator."""
    by_id = {case.id: case for case in cases}
    with_parser = [m for m in measurements if (c := by_id.get(m.id)) is not None and c.answer is not None]
    with_expected = [m for m in measurements if (c := by_id.get(m.id)) is not None and c.expected is not None]
    best = _share([m.metrics.any_correct for m in with_expected])
    worst = _share([m.metrics.all_correct for m in with_expected])
    return SuiteNumbers(
        tar_raw=round_optional(_share([m.metrics.tar_raw for m in measurements])),
        tar_parsed=round_optional(_share([m.metrics.tar_parsed for m in with_parser])),
        best_possible_accuracy=round_optional(best),
        worst_possible_accuracy=round_optional(worst),
        accuracy_spread=None if best is None or worst is None else round_optional(best - worst),
        samples_requested=sum(m.samples_requested for m in measurements),
        samples_ok=sum(m.samples_ok for m in measurements),
        sample_errors=sum(m.sample_errors for m in measurements),
        prompt_tokens=_token_total(measurements, "prompt_tokens"),
        completion_tokens=_token_total(measurements, "completion_tokens"),
    )


def _token_total(measurements: Sequence[CaseMeasurement], key: str) -> int | None:
    """Tokens over the run; None when no provider reported usage."""
    counts = [n for m in measurements if (n := m.usage.get(key)) is not None]
    return sum(counts) if counts else None
