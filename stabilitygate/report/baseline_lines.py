"""What a run says about its baseline, in the sentences the console and the comment share.

The path read, a baseline of another suite's name accepted on purpose, cases a recording refused,
cases whose definition changed, entries no case matches and thresholds inside the noise
(docs/design.md §8, "Files"): a gate that passes against the wrong baseline, or against nothing,
must say so where people look.
"""

from __future__ import annotations

from collections.abc import Sequence

from stabilitygate.against_baseline import NotCompared
from stabilitygate.judge.wording import UPDATE_FLAG
from stabilitygate.report.model import Report

IDS_SHOWN = 10


def baseline_lines(report: Report) -> list[str]:
    """Each fact about the baseline as one sentence; the comment tells a recording in its own notes."""
    facts = report.run.baseline
    updated = facts.status == "updated"
    lines = [*_read(report)]
    if facts.recorded_suite is not None:
        lines.append(
            f"The baseline was recorded for suite {facts.recorded_suite!r}; compared with {report.suite.name!r} "
            "as --accept-baseline-suite asked."
        )
    for case_id in facts.not_recorded:
        lines.append(f"Not recorded in the baseline: {case_id}, {_nothing_parsed(report, case_id)}.")
    changed = [c.id for c in report.cases if isinstance(c.baseline, NotCompared) and c.baseline.status == "changed"]
    if changed and not updated:
        lines.append(f"Definition changed since the baseline: re-record it ({_counted(changed, 'case')}).")
    if facts.orphans:
        lines.append(_orphans(facts.orphans, updated))
    lines.extend(f"Threshold inside the noise: {n.case}: {n.sentence()}." for n in facts.noisy_thresholds)
    return lines


def _read(report: Report) -> list[str]:
    facts = report.run.baseline
    if facts.status == "compared":
        return [f"Compared with the baseline {facts.path}."]
    if facts.status == "missing":
        return [f"No baseline at {facts.path}: every case is new ({UPDATE_FLAG} records one)."]
    if facts.status == "updated":  # the comment's notes and the console's own line say where it went
        return []
    return [f"The baseline {facts.path} was {facts.status}."]


def _nothing_parsed(report: Report, case_id: str) -> str:
    try:
        n = report.case(case_id).samples_ok
    except KeyError:
        return "none of whose answers parsed: fix the parser, then record it again"
    return f"none of whose {n} answers parsed: fix the parser, then record it again"


def _orphans(orphans: Sequence[str], dropped: bool) -> str:
    shown, many = _listed(orphans), len(orphans) != 1
    entries = f"{len(orphans)} baseline entr{'ies' if many else 'y'}"
    if dropped:
        return f"{entries} matched no case and {'were' if many else 'was'} left out of the new baseline: {shown}."
    return f"{entries} match{'' if many else 'es'} no case: renamed? {shown}."


def _counted(ids: Sequence[str], noun: str) -> str:
    return f"{len(ids)} {noun}{'s' if len(ids) != 1 else ''}: {_listed(ids)}"


def _listed(ids: Sequence[str]) -> str:
    """'a, b, c', or the first IDS_SHOWN and how many more."""
    more = f" and {len(ids) - IDS_SHOWN} more" if len(ids) > IDS_SHOWN else ""
    return ", ".join(ids[:IDS_SHOWN]) + more
