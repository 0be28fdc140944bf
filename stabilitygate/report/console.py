"""The lines a person reads on the terminal (or in the CI log) after a run."""

from __future__ import annotations

from stabilitygate.judge.wording import counted
from stabilitygate.report.baseline_lines import baseline_lines
from stabilitygate.report.model import Report, Summary

#: The summary's counts as the verdict line words them: (key, one, more than one).
COUNTED = (("passed", "passed", "passed"), ("failed", "failed", "failed"), ("regressed", "regressed", "regressed"),
           ("warned", "warned", "warned"), ("new", "new", "new"), ("unchanged", "unchanged", "unchanged"),
           ("errors", "error", "errors"))  # fmt: skip
#: What a verdict means in a run that records the baseline: shown, not gated.
WHILE_RECORDING = (("failed", "failed a threshold"), ("regressed", "regressed against the entry it replaces"),
                   ("warned", "warned"))  # fmt: skip
REASONS_SHOWN = 3


def summary_lines(report: Report) -> list[str]:
    """What became of the baseline, the verdict with its counts, then one line per case worth a look."""
    recorded = report.run.baseline.status == "updated"
    quiet = ("pass", "unchanged", "new") if recorded else ("pass", "unchanged")  # a recorded new case is fine
    told = (_as_log_line(line) for line in baseline_lines(report))
    lines = [*_embedding_line(report), *_baseline_line(report), *told, *_verdict_line(report, recorded)]
    for case in report.cases:
        if case.verdict not in quiet:
            reasons = "; ".join(case.reasons[:REASONS_SHOWN])
            lines.append(f"  {case.id}: {case.verdict}: {reasons}")
    return lines


def _as_log_line(sentence: str) -> str:
    """'Compared with the baseline b.json.' -> 'stabilitygate: compared with the baseline b.json'."""
    return f"stabilitygate: {sentence[:1].lower()}{sentence[1:].removesuffix('.')}"


def _baseline_line(report: Report) -> list[str]:
    facts = report.run.baseline
    if facts.status != "updated":
        return []
    s = report.summary
    recorded = s.cases - (s.unchanged or 0)
    kept = f", {facts.kept} kept as {'it was' if facts.kept == 1 else 'they were'}" if facts.kept else ""
    return [f"stabilitygate: baseline written to {facts.path}: {counted(recorded, 'case')} recorded{kept}"]


def _verdict_line(report: Report, recorded: bool) -> list[str]:
    s = report.summary
    if recorded:  # the verdicts are shown, not gated: only what is worth a look
        told = [f"{getattr(s, key)} {words}" for key, words in WHILE_RECORDING if getattr(s, key)]
        return [f"stabilitygate: recorded, not gated ({counted(s.cases, 'case')}: {', '.join(told)})"] if told else []
    parts = [counted(s.cases, "case")] + [
        counted(getattr(s, k), one, more) for k, one, more in COUNTED if getattr(s, k)
    ]
    return [f"stabilitygate: {report.verdict} ({', '.join(parts)}){_changed_only(s)}"]


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
