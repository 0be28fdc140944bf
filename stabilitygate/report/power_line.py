"""The sentence that tells what a compared case can see: its detectable drop (docs/design.md §6, "Power")."""

from __future__ import annotations

from stabilitygate.against_baseline import AgainstBaseline, Compared
from stabilitygate.judge.power import TARGET_POWER


def power_line(record: AgainstBaseline | None) -> str | None:
    """E.g. "Detectable drop: 0.23 in agreement, caught 80% of the time (baseline 95/100, 20 samples
    now; level 0.0023)"; None for a case that was not compared (or a report from before stages)."""
    if not isinstance(record, Compared) or record.baseline_n is None or record.stages is None:
        return None
    b, stages = record, record.stages
    now = f"{b.n} samples now"
    if stages.max_samples and stages.max_samples != stages.samples:
        now = f"{stages.samples} samples now, up to {stages.max_samples}"
    sizes = f"baseline {b.baseline_k}/{b.baseline_n}, {now}; level {b.power_level or 0:.2g}"
    recorded = b.suite_baseline_samples
    if recorded is not None and recorded != b.baseline_n:
        sizes += (
            f"; the baseline holds {b.baseline_n} samples where the suite now records {recorded}: "
            "compared with the sizes it holds"
        )
    if b.detectable_drop is None:
        return f"Detectable drop: none, no fall in agreement is caught {TARGET_POWER:.0%} of the time ({sizes})"
    return f"Detectable drop: {b.detectable_drop:.2f} in agreement, caught {TARGET_POWER:.0%} of the time ({sizes})"
