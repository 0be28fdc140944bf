"""What the comment says about a case's remedies: its diagnosis, the suggestion, how its conditions
differ from the baseline's, its concurrency probe, and the Variants section's rows (docs/design.md §16).

Plain sentences and cells; the templates escape them (model text may be in them: a parsed answer).
"""

from __future__ import annotations

from dataclasses import dataclass

from stabilitygate.judge.wording import decoded, p_phrase, show
from stabilitygate.metrics import Agreement
from stabilitygate.remedies import ProbeResult, VariantResult
from stabilitygate.report.model import CaseResult, Report, RunFacts
from stabilitygate.typed_json import JSON

#: The Variants section stops after this many rows (a table row per variant and one per case as written).
MAX_VARIANT_ROWS = 60
MODAL_SHOWN = 40  # characters of a most common answer in its cell


def remedy_lines(case: CaseResult, run: RunFacts) -> list[str]:
    """The case details' lines on what to do: diagnosis, suggestion, conditions, probe."""
    d = case.diagnostics
    facts = run.conditions
    differ = facts.differ.get(case.id, ()) if facts is not None else ()
    suggestion = (facts.advice.get(case.id) if facts is not None else None) or d.suggestion
    lines = []
    if d.diagnosis:
        lines.append(f"Diagnosis: {d.diagnosis}.")
    if suggestion:
        lines.append(f"Suggestion: {suggestion}")
    if differ:
        lines.append(f"Drawn otherwise than the baseline: {'; '.join(differ)}.")
    if case.probe is not None and not case.probe.nothing_parsed:  # a probe line speaks of answers it compared
        lines.append(probe_line(case.probe, run.sampling.concurrency if run.sampling is not None else None))
    return lines


def conditions_cell(case: CaseResult, run: RunFacts) -> str:
    """Beside a regression or a warning in the table: how the run's conditions differ from the baseline's."""
    differ = run.conditions.differ.get(case.id, ()) if run.conditions is not None else ()
    return "; ".join(differ) if case.verdict in ("regressed", "warn") else ""


def probe_line(probe: ProbeResult, concurrency: int | None = None) -> str:
    """E.g. "Concurrency probe: answers depend on concurrency (server-side batching): 1 distinct
    completion alone, 4 under load (the most common alone: 5/5 alone, 0/5 under load; p = 0.016 after Holm)"."""
    what = "answer" if probe.compared == "answers" else "completion"
    counts = (
        f"{probe.alone_distinct} distinct {what}{'' if probe.alone_distinct == 1 else 's'} in {probe.alone} alone"
        f"{_unparsed(probe.alone_unparsed)}, {probe.under_load_distinct} in {probe.under_load} under load"
        f"{_unparsed(probe.under_load_unparsed)}"
        + (f" at concurrency {concurrency}" if concurrency is not None else "")
    )
    if probe.p_holm is None:
        return f"Concurrency probe: {counts}; nothing to test (one answer in both halves, or a half without samples)."
    modal = (
        f"the most common alone: {probe.modal_alone}/{probe.alone} alone, {probe.modal_under_load}/{probe.under_load}"
    )
    tail = f"{counts} ({modal} under load; {p_phrase(probe.p_holm)} after Holm)."
    if probe.depends:
        return f"Concurrency probe: answers depend on concurrency (server-side batching): {tail}"
    return f"Concurrency probe: no sign that the answers depend on concurrency: {tail}"


def _unparsed(count: int) -> str:
    return f" ({count} did not parse)" if count else ""


@dataclass(frozen=True)
class VariantRow:
    case: str  # the case id on its case-as-written row, else empty
    variant: str
    unique: str
    parsed: str
    semantic: str
    accuracy: str
    modal: str  # the most common answer (the completion without a parser) and its count
    tokens: str
    against: str


@dataclass(frozen=True)
class VariantsSection:
    rows: tuple[VariantRow, ...]
    variants: int
    cases: int
    better: int  # significantly better than the case as written
    left_out: int  # rows past MAX_VARIANT_ROWS


def variants_section(report: Report) -> VariantsSection | None:
    """The Variants section of the comment; None when the run measured no variant."""
    measured = [c for c in report.cases if c.variants]
    if not measured:
        return None
    rows = [row for case in measured for row in _rows(case)]
    variants = [v for c in measured for v in c.variants]
    better = sum(1 for v in variants if v.significant and v.change == "better")
    return VariantsSection(
        tuple(rows[:MAX_VARIANT_ROWS]), len(variants), len(measured), better, max(0, len(rows) - MAX_VARIANT_ROWS)
    )


def _rows(case: CaseResult) -> list[VariantRow]:
    m = case.metrics
    tokens = [t for t in (m.prompt_tokens, m.completion_tokens) if t is not None]
    written = VariantRow(
        case=case.id,
        variant="as written",
        unique=_count(m.unique_completions),
        parsed=_share(m.parsed_agreement),
        semantic=_share(m.semantic_agreement),
        accuracy=_share(m.accuracy),
        modal=_written_modal(case),
        tokens=f"{sum(tokens):,}" if tokens else "—",
        against=_agreement(case.primary) if case.primary is not None else "—",
    )
    return [written, *(_variant_row(v, case.primary) for v in case.variants)]


def _variant_row(v: VariantResult, own: Agreement | None) -> VariantRow:
    name = f"{v.name} ({', '.join(v.overrides)})" if v.overrides else v.name
    if v.error is not None:
        return VariantRow("", name, "—", "—", "—", "—", "—", "—", f"error: {v.error}")
    return VariantRow(
        case="",
        variant=name,
        unique=_count(v.unique_completions),
        parsed=_share(v.parsed_agreement),
        semantic=_share(v.semantic_agreement),
        accuracy=_share(v.accuracy),
        modal=_modal(v.modal, v.modal_count, v.samples_ok),
        tokens=f"{v.tokens:,}" if v.tokens is not None else "—",
        against=_against(v, own),
    )


def _against(v: VariantResult, own: Agreement | None) -> str:
    if v.primary is None or own is None or v.p_holm is None:
        return "not compared"
    verdict = "significant" if v.significant else "not significant"
    return f"{_agreement(v.primary)} against {own.k}/{own.n}: {v.change}, {p_phrase(v.p_holm)} after Holm ({verdict})"


def _agreement(a: Agreement) -> str:
    return f"{a.label} {a.k}/{a.n}"


def _written_modal(case: CaseResult) -> str:
    """The case's own most common answer (its completion without a parser), as a variant's is shown."""
    json_answer = case.parsed_by is not None and case.parsed_by.kind == "json"
    if case.parsed_by is not None:
        top = case.answers[0] if case.answers else None
        return _modal(decoded(top.answer, json_answer), top.count, case.samples_ok) if top else "—"
    first = case.completions[0] if case.completions else None
    return _modal(first.text, first.count, case.samples_ok) if first is not None else "—"


def _modal(value: JSON, count: int | None, n: int) -> str:
    """ "'billing' 9/10": the value, shown short, and how many samples gave it."""
    return "—" if count is None else f"{show(value, MODAL_SHOWN)} {count}/{n}"


def _count(value: int | None) -> str:
    return "—" if value is None else str(value)


def _share(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"
