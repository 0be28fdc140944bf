"""Suite-level numbers: TARr@N, TARa@N and the best/worst possible accuracy (docs/design.md §5, "The numbers")."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from stabilitygate.plain import round_optional
from stabilitygate.results import CaseMeasurement
from stabilitygate.suite.model import ResolvedCase


def _share(flags: Sequence[Any]) -> float | None:
    """Share of True among the measured values (None entries: the case could not say)."""
    known = [bool(f) for f in flags if f is not None]
    return sum(known) / len(known) if known else None


def suite_summary(measurements: Sequence[CaseMeasurement], cases: Sequence[ResolvedCase]) -> dict[str, Any]:
    """Shares over cases; a case with no successful sample is left out of each share's denominator."""
    by_id = {case.id: case for case in cases}
    with_parser = [m for m in measurements if (c := by_id.get(m.id)) is not None and c.answer is not None]
    with_expected = [m for m in measurements if (c := by_id.get(m.id)) is not None and c.expected is not None]
    best = _share([m.metrics.get("any_correct") for m in with_expected])
    worst = _share([m.metrics.get("all_correct") for m in with_expected])
    return {
        **_totals(measurements),
        "tar_raw": round_optional(_share([m.metrics.get("tar_raw") for m in measurements])),
        "tar_parsed": round_optional(_share([m.metrics.get("tar_parsed") for m in with_parser])),
        "best_possible_accuracy": round_optional(best),
        "worst_possible_accuracy": round_optional(worst),
        "accuracy_spread": None if best is None or worst is None else round_optional(best - worst),
    }


def _totals(measurements: Sequence[CaseMeasurement]) -> dict[str, int | None]:
    """Samples and tokens over the run (token counts null when no provider reported usage)."""
    totals: dict[str, int | None] = {
        "samples_requested": sum(m.samples_requested for m in measurements),
        "samples_ok": sum(m.samples_ok for m in measurements),
        "sample_errors": sum(m.sample_errors for m in measurements),
    }
    for key in ("prompt_tokens", "completion_tokens"):
        counts = [m.usage[key] for m in measurements if m.usage.get(key) is not None]
        totals[key] = sum(counts) if counts else None
    return totals
