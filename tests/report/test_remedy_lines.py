"""The comment's sentences on remedies: the probe's line, the conditions beside a regression, the Variants rows."""

from __future__ import annotations

from dataclasses import replace

from stabilitygate.metrics import Agreement, Metrics
from stabilitygate.remedies import ProbeResult, VariantResult
from stabilitygate.report.model import (
    BaselineFacts,
    CaseResult,
    ConditionsFacts,
    Report,
    RunFacts,
    SamplingFacts,
    SuiteRef,
    Summary,
)
from stabilitygate.report.remedy_lines import (
    MAX_VARIANT_ROWS,
    conditions_cell,
    probe_line,
    remedy_lines,
    variants_section,
)
from stabilitygate.results import Diagnostics

PROBE = ProbeResult(
    compared="completions", alone=5, under_load=5, alone_distinct=1, under_load_distinct=4,
    modal_alone=5, modal_under_load=0, p_value=0.004, p_holm=0.008, depends=True,
)  # fmt: skip
DIFFER = ("baseline drawn at concurrency 1, this run at 8",)
CASE = CaseResult(
    id="sum", verdict="regressed", reasons=("dropped",), samples_requested=10, samples_ok=10, sample_errors=0,
    primary=Agreement("mode_share", 5, 10),
    metrics=Metrics(unique_completions=4, prompt_tokens=40, completion_tokens=12),
    diagnostics=Diagnostics(diagnosis="the text varies", suggestion="Ask for the number only."),
)  # fmt: skip
LIVE = RunFacts(
    baseline=BaselineFacts("s.baseline.json", "compared"),
    sampling=SamplingFacts(requests=10, retries=0, interrupted=False, budget_exhausted=False, concurrency=8),
    conditions=ConditionsFacts(cases={}, differ={"sum": DIFFER}, advice={"sum": "Re-run at concurrency 1."}),
)


def test_the_probe_line_says_what_the_halves_show() -> None:
    assert probe_line(PROBE, 8) == (
        "Concurrency probe: answers depend on concurrency (server-side batching): 1 distinct completion in 5 alone, "
        "4 in 5 under load at concurrency 8 (the most common alone: 5/5 alone, 0/5 under load; p = 0.008 after Holm)."
    )
    calm = replace(PROBE, depends=False, p_holm=0.6, under_load_distinct=1, modal_under_load=5)
    assert probe_line(calm).startswith("Concurrency probe: no sign that the answers depend on concurrency: ")
    assert probe_line(replace(PROBE, p_holm=None, depends=False)).endswith(
        "nothing to test (one answer in both halves, or a half without samples)."
    )


def test_the_case_details_lines_come_in_order_and_only_when_there_is_something_to_say() -> None:
    lines = remedy_lines(replace(CASE, probe=PROBE), LIVE)
    assert lines == [
        "Diagnosis: the text varies.",
        "Suggestion: Re-run at concurrency 1.",  # what the conditions support, over the samples' own
        "Drawn otherwise than the baseline: baseline drawn at concurrency 1, this run at 8.",
        "Concurrency probe: answers depend on concurrency (server-side batching): 1 distinct completion in 5 "
        "alone, 4 in 5 under load at concurrency 8 (the most common alone: 5/5 alone, 0/5 under load; "
        "p = 0.008 after Holm).",
    ]
    scored = replace(LIVE, sampling=None, conditions=None)
    assert remedy_lines(CASE, scored) == ["Diagnosis: the text varies.", "Suggestion: Ask for the number only."]
    assert remedy_lines(replace(CASE, diagnostics=Diagnostics()), scored) == []


def test_the_conditions_stand_beside_a_regression_or_a_warning_only() -> None:
    assert conditions_cell(CASE, LIVE) == "baseline drawn at concurrency 1, this run at 8"
    assert conditions_cell(replace(CASE, verdict="warn"), LIVE) == "baseline drawn at concurrency 1, this run at 8"
    assert conditions_cell(replace(CASE, verdict="pass"), LIVE) == ""
    assert conditions_cell(CASE, replace(LIVE, conditions=None)) == ""


def variant(i: int) -> VariantResult:
    return VariantResult(
        name=f"v{i}", overrides=("params",), samples_requested=10, samples_ok=10, sample_errors=0,
        unique_completions=1, primary=Agreement("mode_share", 10, 10), p_value=0.01, p_holm=0.02,
        significant=True, change="better", accuracy=0.8, modal="7", modal_count=10,
    )  # fmt: skip


def report(*cases: CaseResult) -> Report:
    summary = Summary(cases=len(cases), passed=0, failed=0, regressed=len(cases), new=0, errors=0)
    return Report(
        suite=SuiteRef("s.yml", "s"), verdict="fail", exit_code=1, outcome="fail", summary=summary,
        run=RunFacts(baseline=BaselineFacts("s.baseline.json", "compared")), cases=cases,
    )  # fmt: skip


def test_the_variants_section_counts_what_did_better_and_stops_at_its_row_limit() -> None:
    assert variants_section(report(CASE)) is None
    section = variants_section(report(replace(CASE, variants=(variant(0), replace(variant(1), change="worse")))))
    assert section is not None and (section.variants, section.cases, section.better, section.left_out) == (2, 1, 1, 0)
    written, first, _ = section.rows
    assert (written.case, written.variant, written.tokens, written.against) == (
        "sum",
        "as written",
        "52",
        "mode share 5/10",
    )
    assert (written.accuracy, first.accuracy, first.modal) == ("—", "0.80", "'7' 10/10")
    assert first.against == "mode share 10/10 against 5/10: better, p = 0.02 after Holm (significant)"
    many = replace(CASE, variants=tuple(variant(i) for i in range(MAX_VARIANT_ROWS + 5)))
    big = variants_section(report(many))
    assert big is not None and len(big.rows) == MAX_VARIANT_ROWS and big.left_out == 6
