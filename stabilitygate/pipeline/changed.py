"""`--changed-only`: sample only what a change can have affected (docs/design.md, "Changed-only runs").

A case whose definition hash (provider type, model, params, messages, parser) equals its baseline
entry's cannot have changed on our side, so it keeps its baseline figures with the verdict
`unchanged`. `http` and `command` cases always count as changed: the application behind them is
what a pull request changes. `canaries: K` re-measures K unchanged cases as well, picked from the
commit, so drift on the provider's side is still noticed over time.
"""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from stabilitygate.against_baseline import NotCompared
from stabilitygate.judge.baseline import Baseline, BaselineCase
from stabilitygate.pipeline.score import ScoredSamples
from stabilitygate.report.model import CaseResult, ParsedBy
from stabilitygate.results import CaseMeasurement
from stabilitygate.suite.load import LoadedSuite
from stabilitygate.suite.model import ResolvedCase

ALWAYS_CHANGED = frozenset({"http", "command"})  # the application behind them is what changes
NOT_REMEASURED = "not re-measured: definition unchanged since the baseline"


@dataclass(frozen=True)
class ChangedSelection:
    """Which cases a changed-only run samples, and which keep their baseline figures."""

    sampled: list[ResolvedCase]
    unchanged: list[tuple[ResolvedCase, BaselineCase]]
    canaries: tuple[str, ...]
    everything_because: str | None = None  # why every case is sampled after all

    @property
    def requests_saved(self) -> int:
        return sum(case.samples for case, _ in self.unchanged)


def select_changed(
    cases: Sequence[ResolvedCase], baseline: Baseline | None, *, canaries: int, commit: str
) -> ChangedSelection:
    """Split `cases` into those to sample (new, changed, always-changed, canaries) and the unchanged."""
    if baseline is None:
        return ChangedSelection(list(cases), [], (), "there is no baseline to compare definitions with")
    same = [c for c in cases if _unchanged_entry(c, baseline) is not None]
    picked = set(pick_canaries([c.id for c in same], canaries, commit))
    sampled = [c for c in cases if c not in same or c.id in picked]
    unchanged = [(c, baseline.cases[c.id]) for c in same if c.id not in picked]
    return ChangedSelection(sampled, unchanged, tuple(c.id for c in same if c.id in picked))


def _unchanged_entry(case: ResolvedCase, baseline: Baseline) -> BaselineCase | None:
    return None if case.provider.type in ALWAYS_CHANGED else baseline.entry_for(case)


def pick_canaries(case_ids: Sequence[str], count: int, commit: str) -> list[str]:
    """`count` of the ids, the same for every job of one commit and different from commit to commit."""
    ranked = sorted(case_ids, key=lambda cid: hashlib.sha256(f"{commit}\0{cid}".encode()).hexdigest())
    return ranked[: max(count, 0)]


def unchanged_result(case: ResolvedCase, entry: BaselineCase) -> CaseResult:
    """The report row of a case that was not re-measured: its baseline figures, verdict `unchanged`."""
    return CaseResult.of(
        baseline_measurement(case, entry),
        line=case.line,
        hash=case.definition_hash,
        verdict="unchanged",
        reasons=(NOT_REMEASURED,),
        primary=entry.primary,
        baseline=NotCompared("unchanged", entry.hash),
        parsed_by=ParsedBy.of(case.answer),
    )


def baseline_measurement(case: ResolvedCase, entry: BaselineCase) -> CaseMeasurement:
    """The baseline's figures of a case, as a measurement (the suite-level numbers cover it too)."""
    return CaseMeasurement(
        id=case.id,
        samples_requested=entry.samples,
        samples_ok=entry.samples,
        sample_errors=0,
        metrics=entry.metrics,
        completions=entry.completions,
        answers=entry.answers,
        fingerprints=entry.fingerprints,
    )


def unsampled_unchanged(
    loaded: LoadedSuite, scored: ScoredSamples, baseline: Baseline | None
) -> list[tuple[ResolvedCase, BaselineCase]]:
    """For the merge of a changed-only matrix: the suite's cases no shard sampled, still as recorded."""
    if baseline is None:
        return []
    sampled = {c.id for c in scored.cases}
    return [
        (case, entry)
        for case in loaded.resolved_cases()
        if case.id not in sampled and (entry := _unchanged_entry(case, baseline)) is not None
    ]


def current_commit(environ: Mapping[str, str], directory: Path) -> str:
    """The commit the canaries are picked from: $GITHUB_SHA in CI, else git's HEAD, else none."""
    sha = environ.get("GITHUB_SHA", "").strip()
    if sha:
        return sha
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=directory, capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""
