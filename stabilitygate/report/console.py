"""The lines a person reads on the terminal (or in the CI log) after a run."""

from __future__ import annotations

from stabilitygate.report.baseline_lines import baseline_lines
from stabilitygate.report.model import Report, Summary

COUNTED = (("passed", "passed"), ("failed", "failed"), ("regressed", "regressed"), ("warned", "warned"),
           ("new", "new"), ("unchanged", "unchanged"), ("errors", "errors"))  # fmt: skip
REASONS_SHOWN = 3


def summary_lines(report: Report) -> list[str]:
    """The verdict with its counts, then one line per case that did not pass."""
    lines = [*_embedding_line(report), *(_as_log_line(line) for line in baseline_lines(report, "console"))]
    lines.append(_verdict_line(report))
    for case in report.cases:
        if case.verdict not in ("pass", "unchanged"):
            reasons = "; ".join(case.reasons[:REASONS_SHOWN])
            lines.append(f"  {case.id}: {case.verdict}: {reasons}")
    return lines


def _as_log_line(sentence: str) -> str:
    """'Compared with the baseline b.json.' -> 'stabilitygate: compared with the baseline b.json'."""
    return f"stabilitygate: {sentence[:1].lower()}{sentence[1:].removesuffix('.')}"


def _verdict_line(report: Report) -> str:
    s = report.summary
    parts = [f"{s.cases} cases"] + [f"{getattr(s, key)} {word}" for key, word in COUNTED if getattr(s, key)]
    return f"stabilitygate: {report.verdict} ({', '.join(parts)}){_changed_only(s)}"


def _embedding_line(report: Report) -> list[str]:
    facts = report.run.embedding
    if facts is None:
        return []
    total = facts.texts_embedded
    if facts.texts_from_cache is None:
        return [f"stabilitygate: embedded {total} distinct texts"]
    cached = facts.texts_from_cache
    return [f"stabilitygate: embedded {total} distinct texts ({total - cached} by the model, {cached} from the cache)"]


def _changed_only(s: Summary) -> str:
    """`; 1 of 20 cases re-measured, 76 requests saved` after a changed-only run."""
    if s.unchanged is None:
        return ""
    return f"; {s.cases - s.unchanged} of {s.cases} cases re-measured, {s.requests_saved or 0} requests saved"
