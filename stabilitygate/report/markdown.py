"""The Markdown PR comment and job summary, rendered from a Report (docs/design.md, "Files").

Model text is untrusted and goes through the safe_text filters; the template itself runs with
autoescape off because HTML escaping is not Markdown escaping. GitHub rejects comments of 65,536
characters or more, so the comment shrinks step by step until it fits: shorter completions, then
fewer details blocks, then fewer table rows, each time saying what was left out.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

import jinja2

from stabilitygate.against_baseline import AgainstBaseline, Compared, NotCompared
from stabilitygate.judge.wording import counted, decoded, p_phrase, update_hint
from stabilitygate.report import safe_text
from stabilitygate.report.baseline_lines import baseline_lines
from stabilitygate.report.meaning_lines import bar_cut_line, meaning_lines
from stabilitygate.report.model import CaseResult, ParsedBy, Report, RunFacts, Summary
from stabilitygate.report.outcome_lines import headline, headline_emoji, quiet_causes, run_cause_line
from stabilitygate.report.power_line import power_line
from stabilitygate.report.remedy_lines import conditions_cell, remedy_lines, variants_section
from stabilitygate.sampling.causes import most_common_cause
from stabilitygate.typed_json import JSON

#: GitHub's limit is 65,536 characters; the margin leaves room for a line another tool may add.
MAX_CHARS = 65_000
COMPLETION_LIMITS = (2_000, 600, 200, 80)  # characters of each completion shown, longest first
TOP_COMPLETIONS = 5
TOP_ANSWERS = 5
EMOJI = {
    "pass": "✅",
    "fail": "❌",
    "regressed": "📉",
    "warn": "⚠️",
    "new": "🆕",
    "error": "🛑",
    "unchanged": "⏸️",
}
UPDATE_HINT = update_hint("markdown")
SEVERITY = {"error": 0, "fail": 1, "regressed": 2, "warn": 3, "new": 4, "pass": 5, "unchanged": 6}


def comment_marker(suite_name: str) -> str:
    """The hidden first line that finds this suite's comment again on later pushes."""
    return f"<!-- stabilitygate:{safe_text.marker_name(suite_name)} -->"


@dataclass(frozen=True)
class _Layout:
    completion_limit: int
    rows: frozenset[int]  # indexes of the cases with a table row
    details: tuple[int, ...]  # indexes of the cases with a details block, most severe first


def render_markdown(report: Report, *, max_chars: int = MAX_CHARS) -> str:
    cases = list(report.cases)
    items = _items_by_priority(cases)
    everything = _layout(items, len(items), COMPLETION_LIMITS[0])
    for limit in COMPLETION_LIMITS:
        text = _render(report, replace(everything, completion_limit=limit))
        if _size(text) <= max_chars:
            return text
    # Keep the longest prefix of the priority list that fits (bisection: size grows with the prefix).
    lo, hi, best = 0, len(items) - 1, None
    while lo <= hi:
        mid = (lo + hi) // 2
        text = _render(report, _layout(items, mid, COMPLETION_LIMITS[-1]))
        if _size(text) <= max_chars:
            best, lo = text, mid + 1
        else:
            hi = mid - 1
    if best is not None:
        return best
    # Only a pathological report (say, a 60,000-character suite name) gets here.
    note = "\n\n_…the rest of this comment was cut to stay under GitHub's size limit._\n"
    text = _render(report, _layout(items, 0, COMPLETION_LIMITS[-1]))
    return text[: max_chars - 2 * len(note)] + note


def _items_by_priority(cases: list[CaseResult]) -> list[tuple[str, int]]:
    """What the comment shows, most important first; when space runs out the tail goes.

    Details go before rows, except that a failing case's details outrank passing and new rows:
    the regression's completions matter more than the 500th "pass" line.
    """
    order = sorted(range(len(cases)), key=lambda i: (SEVERITY[cases[i].verdict], i))
    bad = [i for i in order if SEVERITY[cases[i].verdict] < SEVERITY["new"]]
    bad_set = set(bad)
    rest = [i for i in order if i not in bad_set]
    new = [i for i in rest if cases[i].verdict == "new"]
    return [
        *(("row", i) for i in bad),
        *(("details", i) for i in bad),
        *(("row", i) for i in rest),
        *(("details", i) for i in new),
    ]


def _layout(items: list[tuple[str, int]], keep: int, completion_limit: int) -> _Layout:
    kept = items[:keep]
    return _Layout(
        completion_limit=completion_limit,
        rows=frozenset(i for kind, i in kept if kind == "row"),
        details=tuple(i for kind, i in kept if kind == "details"),
    )


def _size(text: str) -> int:
    """Length in UTF-16 code units, which is at least what any counter of characters reports."""
    return len(text.encode("utf-16-le")) // 2


def _render(report: Report, layout: _Layout) -> str:
    cases = list(report.cases)
    not_passed = sum(1 for c in cases if c.verdict not in ("pass", "unchanged"))
    context = {
        "marker": comment_marker(report.suite.name),
        "suite_name": report.suite.name,
        "headline": headline(report),
        "emoji": headline_emoji(report),
        "summary": _summary_line(report),
        "rows": [_row(c, report.run) for i, c in enumerate(cases) if i in layout.rows],
        "rows_left_out": _left_out([c for i, c in enumerate(cases) if i not in layout.rows]),
        "details": [_details(cases[i], layout.completion_limit, report.run) for i in layout.details],
        "details_left_out": not_passed - len(layout.details),
        "variants": variants_section(report),
        "footer": _footer(report),
    }
    return _environment().get_template("comment.md.j2").render(**context)


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
        autoescape=False,  # Markdown, not HTML: escaping is explicit, through the filters below
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(
        inline=safe_text.inline,
        cell=safe_text.cell,
        html=safe_text.html_text,
        fence=safe_text.fence,
    )
    return env


# --- view model: numbers formatted here, text escaped by the template's filters ---------------


def _summary_line(report: Report) -> str:
    """The counts of the verdicts a run has, then its suite-level shares in words (the names of the
    field, TARr@N and TARa@N, are in the footer: a reviewer needs what they mean, not what they are called)."""
    s = report.summary
    counts = [f"**{counted(s.cases, 'case')}**: {s.passed} passed"]
    also = sum(1 for c in report.cases if c.verdict == "fail" and _also_regressed(c))
    if s.failed:
        told = "it also regressed" if also == s.failed == 1 else f"{also} of them also regressed"
        counts.append(f"{s.failed} failed" + (f" ({told})" if also else ""))
    counts += [f"{count} {word}" for count, word in ((s.regressed, "regressed"), (s.warned, "warned"), (s.new, "new"))
               if count]  # fmt: skip
    if s.errors:
        counts.append(counted(s.errors, "error"))
    line = ", ".join(counts)
    if s.unchanged is not None:
        line += (
            f", {s.unchanged} unchanged (not re-measured: {s.cases - s.unchanged} of {s.cases} cases sampled, "
            f"{s.requests_saved or 0:,} requests saved)"
        )
    words = _shares_in_words(report)
    return line + (f"\n\n{words}" if words else "")


def _shares_in_words(report: Report) -> str:
    """TARr@N, TARa@N and the best and worst possible accuracy, said as counts of cases for a reader
    who knows none of those names (the footer names them)."""
    metrics = [c.metrics for c in report.cases]
    same_text = [m.tar_raw for m in metrics if m.tar_raw is not None]
    same_answer = [m.tar_parsed for m in metrics if m.tar_parsed is not None]
    every = [m.all_correct for m in metrics if m.all_correct is not None]
    some = [m.any_correct for m in metrics if m.any_correct is not None]
    if not same_text:
        return ""
    drawn = {c.samples_ok for c in report.cases if c.verdict != "unchanged"}  # what was measured, not asked
    samples = f"all {drawn.pop()} samples" if len(drawn) == 1 else "every sample"
    text = f"{sum(same_text)} of {counted(len(same_text), 'case')} gave the same text in {samples}"
    if same_answer:
        text += f"; of the {len(same_answer)} whose answer is read, {sum(same_answer)} gave the same answer each time"
    text += "."
    if every:
        text += (
            f" Of the {len(every)} with an expected answer, {sum(every)} gave it every time and {sum(some)} at "
            "least once."
        )
    return text


def _also_regressed(case: CaseResult) -> bool:
    """A case that failed a threshold and, besides, regressed against the baseline."""
    return isinstance(case.baseline, Compared) and case.baseline.regressed


def _jargon(report: Report) -> str:
    """The field's names for the shares the headline says in words: TARr@N, TARa@N, accuracy."""
    s, n = report.summary, _common_n(report)
    parts = []
    if s.tar_raw is not None:
        parts.append(f"TARr@{n} {s.tar_raw:.2f}")
    if s.tar_parsed is not None:
        parts.append(f"TARa@{n} {s.tar_parsed:.2f}")
    best, worst = s.best_possible_accuracy, s.worst_possible_accuracy
    if best is not None and worst is not None:
        parts.append(f"accuracy best {best:.2f} / worst {worst:.2f}")
    return " · ".join(parts)


def _common_n(report: Report) -> str:
    counts = Counter(c.measurement.samples_requested for c in report.cases if c.verdict != "unchanged")
    if not counts:
        return "N"
    return str(sorted(counts.items(), key=lambda kv: (-kv[1], -kv[0]))[0][0])


def _tokens(s: Summary) -> str:
    prompt, completion = s.prompt_tokens, s.completion_tokens
    if not prompt and not completion:
        return ""
    return f"{int(prompt or 0):,} prompt + {int(completion or 0):,} completion tokens"


#: What a parsed case's agreement is on, by parser (json: its pointer).
AGREEMENT_ON = {"choice": "the choice", "number": "the number", "regex": "the match", "text": "the text"}
#: ... and an unparsed case's, by its primary metric.
AGREEMENT_OF = {"semantic_agreement": "meaning", "mode_share": "the exact text"}


def _row(case: CaseResult, run: RunFacts) -> dict[str, str]:
    metrics = case.metrics
    cosine, unique = metrics.cosine_min, metrics.unique_completions
    verdict = f"{EMOJI.get(case.verdict, '')} {case.verdict}"
    if case.verdict == "fail" and _also_regressed(case):
        verdict += f" · {EMOJI['regressed']} regressed"
    return {
        "id": case.id,
        "unique": "—" if unique is None else str(unique),
        "agreement": _agreement(case),
        "parsed": _parsed(case),
        "cosine": "—" if cosine is None else f"{cosine:.3f}",
        "verdict": verdict,
        "change": "; ".join(
            part
            for part in (_change(case.baseline, _json_text(case)), conditions_cell(case, run))
            if part and part != "—"
        )
        or "—",
    }


def _parsed(case: CaseResult) -> str:
    """'8/10': samples whose answer parsed, of those that succeeded; '—' for a case without a parser."""
    failures = case.metrics.parse_failures
    return "—" if failures is None else f"{case.samples_ok - failures}/{case.samples_ok}"


def _agreement(case: CaseResult) -> str:
    """'8/12 on /label': the primary agreement and what it is agreement on."""
    primary, parsed = case.primary, case.parsed_by
    if primary is None:
        return "—"
    on = AGREEMENT_OF.get(primary.metric)
    if primary.metric == "parsed_agreement" and parsed is not None:
        on = (parsed.pointer or "the JSON") if parsed.kind == "json" else AGREEMENT_ON[parsed.kind]
    return f"{primary.k}/{primary.n}" + (f" on {on}" if on else "")


def _json_text(case: CaseResult) -> bool:
    return isinstance(case.parsed_by, ParsedBy) and case.parsed_by.kind == "json"


NOT_COMPARED = {"unchanged": "not re-measured", "no_baseline": "no baseline", "missing": "no baseline",
                "changed": "definition changed", "not_measured": "—"}  # fmt: skip


def _change(b: AgainstBaseline | None, json_text: bool = False) -> str:
    if b is None:
        return "—"
    if isinstance(b, NotCompared):
        return NOT_COMPARED[b.status]
    parts = []
    if b.baseline_k is not None and b.k is not None:
        text = f"{b.baseline_k}/{b.baseline_n} → {b.k}/{b.n}"
        if b.p_adjusted is not None and (b.drop or 0) > 0:
            text += f", {p_phrase(b.p_adjusted)}"
        parts.append(text)
    if b.answer_changed:
        before = decoded(b.baseline_modal.value, json_text) if b.baseline_modal else None
        now = decoded(b.modal.value, json_text) if b.modal else None
        parts.append(f"{b.kind} {_quote(before)} → {_quote(now)}")
    if b.semantic_drift and b.modal_cosine is not None:
        parts.append(f"meaning moved (cosine {b.modal_cosine:.2f})")
    if b.warned:
        parts.append("a change that is not significant")
    if b.fingerprints_changed:
        parts.append("fingerprint changed")
    return "; ".join(parts) or "—"


def _quote(value: JSON, limit: int = 30) -> str:
    text = value if isinstance(value, str) else safe_json(value)
    text = " ".join(text.split())
    return "'" + (text if len(text) <= limit else text[: limit - 1] + "…") + "'"


def safe_json(value: JSON) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _details(case: CaseResult, limit: int, run: RunFacts) -> dict[str, object]:
    m = case.measurement
    n = m.samples_ok
    metrics = m.metrics
    completions = []
    for row in m.completions[:TOP_COMPLETIONS]:
        shown, _ = safe_text.truncate(row.text, limit)
        cut = (row.chars or len(row.text)) - len(shown)  # the report may have cut it already
        completions.append({"bar": safe_text.bar(row.count, n), "text": shown, "cut": cut})
    json_text = _json_text(case)
    answers = [
        {"bar": safe_text.bar(row.count, n), "value": _quote(decoded(row.answer, json_text), 200)}
        for row in m.answers[:TOP_ANSWERS]
    ]
    # Where the cosine bar cut and where the texts first differ tell of free text; a parsed case's
    # reader reads its answers instead.
    parsed = case.parsed_by is not None
    meaning = [line for line in meaning_lines(m) if not (parsed and line == bar_cut_line(m))]
    also = f" · {EMOJI['regressed']} regressed" if case.verdict == "fail" and _also_regressed(case) else ""
    reasons = list(case.reasons[:20])
    return {
        "id": case.id,
        "verdict": case.verdict + also,
        "emoji": EMOJI[case.verdict],
        "reasons": reasons,
        "cause": _cause(case, reasons),
        "notes": m.notes[:10],
        "meaning": meaning,
        "power": power_line(case.baseline),
        "remedies": remedy_lines(case, run),
        "divergence": None if parsed else metrics.divergence_token,
        "unique": metrics.unique_completions,
        "n": n,
        "answers": answers,
        "completions": completions,
        "more_completions": max(0, (metrics.unique_completions or len(m.completions)) - TOP_COMPLETIONS),
    }


def _cause(case: CaseResult, reasons: list[str]) -> str | None:
    """Why the case's samples failed, unless a reason already says it (sampling/causes.py)."""
    cause = most_common_cause(case.errors)
    if cause is None or any(cause.told_in(reason) for reason in reasons):
        return None
    return f"{counted(case.sample_errors, 'sample')} of {case.samples_requested} failed, {cause.sentence()}"


def _left_out(rows: list[CaseResult]) -> str:
    if not rows:
        return ""
    counts = Counter(r.verdict for r in rows)
    parts = [f"{counts[v]} {v}" for v in sorted(counts, key=lambda v: SEVERITY.get(v, len(SEVERITY)))]
    return f"{len(rows)} more cases ({', '.join(parts)})"


def _footer(report: Report) -> dict[str, object]:
    s = report.summary
    updated = report.run.baseline.status == "updated"
    hints = []
    if s.regressed and not updated:
        hints.append(f"If the change is intended, {UPDATE_HINT}.")
    if s.new and not updated:
        hints.append(f"New or changed cases are not compared yet: {UPDATE_HINT}.")
    return {
        "tool": f"{report.tool_name} {report.tool_version}".strip(),
        "figures": _jargon(report),
        "tokens": _tokens(s),
        "hints": hints,
        "notes": _run_notes(report),
    }


def _run_notes(report: Report) -> list[str]:
    """Sentences about the run as a whole: how sampling ended, what became of the baseline."""
    sampling, baseline = report.run.sampling, report.run.baseline
    notes = []
    if sampling is not None and sampling.interrupted:
        notes.append("The run was interrupted: the numbers cover only what was sampled.")
    if sampling is not None and sampling.fatal_error:
        notes.append(f"The run stopped: {sampling.fatal_error}")
    budget = run_cause_line(report)
    if budget is not None:
        notes.append(budget)
    notes.extend(quiet_causes(report, ("pass", "unchanged")))  # the cases without details of their own
    if report.run.entailment is not None:
        notes.append(report.run.entailment.summary)
    notes.extend(baseline_lines(report))
    if baseline.status == "updated":
        notes.append(f"The baseline was recorded from this run: commit {baseline.path}.")
    elif baseline.status not in ("compared", "missing"):  # not written, and why
        notes.append(f"The baseline was {baseline.status}.")
    return notes
