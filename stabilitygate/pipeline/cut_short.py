"""The cases an error no retry can fix cut short (a refused key, a body template failing at run time).

Such an error stops the whole run (sampling/sampler.py), so the cases not finished by then were not
measured: each becomes `error` with one reason, the failing case's naming the cause and the others the
case that stopped them (docs/design.md §3), instead of a verdict on the few samples drawn or "only 0
of N samples succeeded" for a case never tried. What was drawn stays in the report and the samples
file, so `score` can finish the run once the cause is fixed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from stabilitygate.against_baseline import NotCompared
from stabilitygate.results import CaseVerdict
from stabilitygate.samples import Sample


def cut_short_reasons(
    requested: Mapping[str, int],
    samples: Sequence[Sample],
    fatal_error: str,
    early_stopped: Mapping[str, str],
) -> dict[str, str]:
    """Case id -> its one reason, for each case with fewer samples than planned (early stops aside)."""
    drawn = Counter(s.case for s in samples)
    failing = next((s.case for s in samples if s.error is not None and s.error.endswith(fatal_error)), None)
    reasons = {}
    for case_id, planned in requested.items():
        got = drawn.get(case_id, 0)
        if got >= planned or case_id in early_stopped:
            continue
        tally = f"{got} of its {planned} samples drawn"
        if case_id == failing:
            reasons[case_id] = f"not measured: {fatal_error} (the run stopped here, {tally})"
        elif failing is not None:
            reasons[case_id] = f"not measured: the run stopped when case {failing} failed ({tally})"
        else:  # stopped before any request (a provider that could not start)
            reasons[case_id] = f"not measured: {fatal_error} (the run stopped before sampling)"
    return reasons


def with_cut_short(verdicts: Sequence[CaseVerdict], reasons: Mapping[str, str]) -> list[CaseVerdict]:
    """The verdicts, with each case cut short `error` for its one reason."""
    out = []
    for verdict in verdicts:
        why = reasons.get(verdict.id)
        if why is None:
            out.append(verdict)
            continue
        recorded = verdict.baseline.hash if verdict.baseline is not None else None
        out.append(CaseVerdict(verdict.id, "error", (why,), NotCompared("not_measured", recorded), verdict.primary))
    return out
