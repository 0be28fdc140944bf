"""The lines a person reads on the terminal (or in the CI log) after a run."""

from __future__ import annotations

from stabilitygate.judge.wording import counted
from stabilitygate.report.baseline_lines import baseline_lines
from stabilitygate.report.model import CaseResult, Report, Summary
from stabilitygate.report.outcome_lines import job_sentence, quiet_causes, run_cause_line
from stabilitygate.report.safe_text import clean
from stabilitygate.results import VerdictName
from stabilitygate.sampling.causes import most_common_cause

#: The summary's counts as the verdict line words them: (key, one, more than one).
COUNTED = (("passed", "passed", "passed"), ("failed", "failed", "failed"), ("regressed", "regressed", "regressed"),
           ("warned", "warned", "warned"), ("new", "new", "new"), ("unchanged", "unchanged", "unchanged"),
           ("errors", "error", "errors"))  # fmt: skip
#: What a verdict means in a run that records the baseline: shown, not gated.
WHILE_RECORDING = (("failed", "failed a threshold"), ("regressed", "regressed against the entry it replaces"),
                   ("warned", "warned"))  # fmt: skip
REASONS_SHOWN = 3
EXAMPLE_CHARS = 200  # of the example completion shown under a case worth a look


def summary_lines(report: Report) -> list[str]:
    """What became of the baseline, the verdict with its counts, then one line per case worth a look."""
    recorded = report.run.baseline.status == "updated"
    # Shown no further (a recorded new case is fine): only their failed samples' cause, when they have some.
    quiet: tuple[VerdictName, ...] = ("pass", "unchanged", "new") if recorded else ("pass", "unchanged")
    told = (_as_log_line(line) for line in baseline_lines(report))
    ran_out = [f"stabilitygate: {_lower(line)}" for line in [run_cause_line(report)] if line]
    lines = [*_embedding_line(report), *_baseline_line(report), *told, *ran_out, *_verdict_line(report, recorded)]
    for case in report.cases:
        if case.verdict not in quiet:
            reasons = "; ".join(case.reasons[:REASONS_SHOWN])
            lines.append(f"  {case.id}: {case.verdict}: {reasons}")
            lines.extend(f"    {line}" for line in _case_lines(case, reasons))
    lines.extend(f"stabilitygate: {_lower(line)}" for line in quiet_causes(report, quiet))
    return lines


def _case_lines(case: CaseResult, shown: str) -> list[str]:
    """Under a case worth a look: why its samples failed (unless its reasons said it), and one of its
    completions, so that the reader need not open the Markdown file to see what the model said."""
    lines = []
    cause = most_common_cause(case.errors)
    if cause is not None and not cause.told_in(shown):
        lines.append(cause.said())
    if case.completions:
        top = case.completions[0]
        text = " ".join(clean(top.text).split())
        text = text if len(text) <= EXAMPLE_CHARS else text[: EXAMPLE_CHARS - 1] + "…"
        lines.append(f"e.g. ({top.count} of {case.samples_ok} samples): {text!r}" if text else (
            f"e.g. ({top.count} of {case.samples_ok} samples): an empty completion"))  # fmt: skip
    return lines


def _lower(sentence: str) -> str:
    return f"{sentence[:1].lower()}{sentence[1:].removesuffix('.')}"


def _as_log_line(sentence: str) -> str:
    """'Compared with the baseline b.json.' -> 'stabilitygate: compared with the baseline b.json'."""
    return f"stabilitygate: {_lower(sentence)}"


def _baseline_line(report: Report) -> list[str]:
    facts = report.run.baseline
    if facts.status != "updated":
        return []
    kept = f", {facts.kept} kept as {'it was' if facts.kept == 1 else 'they were'}" if facts.kept else ""
    return [f"stabilitygate: baseline written to {facts.path}: {counted(facts.recorded, 'case')} recorded{kept}"]


def _verdict_line(report: Report, recorded: bool) -> list[str]:
    """What the run found (the cases by verdict), then whether the job fails and why (report/outcome_lines.py)."""
    s = report.summary
    if recorded:  # the verdicts are shown, not gated: only what is worth a look
        told = [f"{getattr(s, key)} {words}" for key, words in WHILE_RECORDING if getattr(s, key)]
        shown = [f"stabilitygate: recorded, not gated ({counted(s.cases, 'case')}: {', '.join(told)})"] if told else []
        return [*shown, f"stabilitygate: {job_sentence(report)}"] if report.exit_code else shown
    parts = [counted(s.cases, "case")] + [
        counted(getattr(s, k), one, more) for k, one, more in COUNTED if getattr(s, k)
    ]
    return [f"stabilitygate: {', '.join(parts)}{_changed_only(s)}; {job_sentence(report)}"]


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
