"""The sentence that tells what a compared case can see: its detectable drop (docs/design.md §6, "Power")."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stabilitygate.judge.power import TARGET_POWER


def power_line(comparison: Mapping[str, Any] | None) -> str | None:
    """E.g. "Detectable drop: 0.23 in agreement, caught 80% of the time (baseline 95/100, 20 samples
    now; level 0.0023)"; None for a case that was not compared."""
    b = comparison or {}
    if b.get("status") != "compared" or b.get("baseline_n") is None or "detectable_drop" not in b:
        return None
    stages = b.get("stages") or {}
    now = f"{b.get('n')} samples now"
    if stages.get("max_samples") and stages.get("max_samples") != stages.get("samples"):
        now = f"{stages['samples']} samples now, up to {stages['max_samples']}"
    sizes = f"baseline {b.get('baseline_k')}/{b['baseline_n']}, {now}; level {float(b.get('power_level') or 0):.2g}"
    recorded = b.get("suite_baseline_samples")
    if recorded is not None and recorded != b["baseline_n"]:
        sizes += (
            f"; the baseline holds {b['baseline_n']} samples where the suite now records {recorded}: "
            "compared with the sizes it holds"
        )
    drop = b.get("detectable_drop")
    if drop is None:
        return f"Detectable drop: none, no fall in agreement is caught {TARGET_POWER:.0%} of the time ({sizes})"
    return f"Detectable drop: {float(drop):.2f} in agreement, caught {TARGET_POWER:.0%} of the time ({sizes})"
