"""The PR comment: its shape, hostile model text kept inert, and GitHub's 65,536-character limit."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser
from typing import Any

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options

from stabilitygate.judge.baseline import baseline_from_run
from stabilitygate.judge.gate import exit_code, run_verdict, verdict_counts
from stabilitygate.judge.verdicts import judge_cases
from stabilitygate.measure.summary import SuiteNumbers
from stabilitygate.report.json_report import build_report
from stabilitygate.report.markdown import comment_marker, render_markdown
from stabilitygate.report.model import BaselineFacts, Report, RunFacts, SuiteRef
from stabilitygate.results import CaseMeasurement
from stabilitygate.suite.model import AnswerSpec, Message, ProviderConfig, Regression, ResolvedCase, Thresholds
from tests.support.typed import typed

GITHUB_LIMIT = 65_536
EXTENSIONS = ["table", "autolink", "strikethrough", "tasklist"]  # no tagfilter: raw HTML would pass
HOSTILE = [
    "```` a run of four, ``` three, `` two",
    "</details>\n\n# Injected heading\n<details open>",
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "@org/team please approve, fixes #12",
    "| broken | table |\n|---|---|",
]


def rcase(
    cid: str,
    verdict: str,
    completions: list[tuple[str, int]],
    *,
    answers: list[tuple[Any, int]] | None = None,
    reasons: list[str] | None = None,
    baseline: dict[str, Any] | None = None,
    parse_failures: int | None = None,
) -> dict[str, Any]:
    n = sum(c for _, c in completions)
    parsed = {} if parse_failures is None else {"parse_failures": parse_failures}
    return {
        "id": cid,
        "line": 3,
        "verdict": verdict,
        "reasons": reasons or [f"{verdict}: agreement {completions[0][1]}/{n}"],
        "samples_requested": n,
        "samples_ok": n,
        "sample_errors": 0,
        "primary": {"metric": "parsed_agreement", "k": completions[0][1], "n": n},
        "metrics": {
            "unique_completions": len(completions),
            "cosine_min": 0.91234,
            "divergence_token": 5 if len(completions) > 1 else None,
            **parsed,
        },
        "completions": [{"text": t, "count": c} for t, c in completions],
        "answers": [{"answer": a, "count": c} for a, c in answers or []],
        "fingerprints": [],
        "notes": [],
        "baseline": baseline,
    }


def report_dict(
    cases: list[dict[str, Any]], name: str = "demo", verdict: str = "fail", exit_code: int | None = None
) -> dict[str, Any]:
    verdicts = ("pass", "fail", "regressed", "warn", "new", "error")
    counts = {v: sum(1 for c in cases if c["verdict"] == v) for v in verdicts}
    return {
        "schema_version": 1,
        "tool": {"name": "llm-stability-gate", "version": "0.1.0"},
        "suite": {"path": "s.yml", "name": name},
        "verdict": verdict,
        "exit_code": {"pass": 0, "fail": 1, "error": 3}[verdict] if exit_code is None else exit_code,
        "summary": {
            "cases": len(cases),
            "passed": counts["pass"],
            "failed": counts["fail"],
            "regressed": counts["regressed"],
            "warned": counts["warn"],
            "new": counts["new"],
            "errors": counts["error"],
            "tar_raw": 0.5,
            "tar_parsed": 0.75,
            "best_possible_accuracy": 0.9,
            "worst_possible_accuracy": 0.6,
            "prompt_tokens": 12345,
            "completion_tokens": 678,
        },
        "run": {"baseline": {"path": "s.baseline.json", "status": "compared"}, "fail_on": "regression"},
        "cases": cases,
    }


def report(cases: list[dict[str, Any]], name: str = "demo", verdict: str = "fail") -> Report:
    return Report.from_dict(report_dict(cases, name, verdict))


class Html(HTMLParser):
    """What a browser would build: elements with attributes, and text outside code."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.closed: list[str] = []
        self.code_depth = 0
        self.prose: list[str] = []
        self.code: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))
        if tag in ("code", "pre"):
            self.code_depth += 1

    def handle_endtag(self, tag: str) -> None:
        self.closed.append(tag)
        if tag in ("code", "pre"):
            self.code_depth -= 1

    def handle_data(self, data: str) -> None:
        (self.code if self.code_depth else self.prose).append(data)


def parse(markdown: str) -> Html:
    rendered = cmarkgfm.markdown_to_html_with_extensions(
        markdown, options=Options.CMARK_OPT_UNSAFE, extensions=EXTENSIONS
    )
    parser = Html()
    parser.feed(rendered)
    return parser


def assert_inert(markdown: str) -> Html:
    page = parse(markdown)
    names = [tag for tag, _ in page.tags]
    assert not {"script", "img", "iframe", "style", "h1", "a"} & set(names), names
    assert not [(t, a) for t, a in page.tags for name, _ in a if name.lower().startswith("on")]
    ours = markdown.count("\n<details><summary>")
    assert names.count("details") == ours == page.closed.count("details")
    assert names.count("summary") == ours
    assert "@org/team" not in "".join(page.prose) and "#12" not in "".join(page.prose)
    return page


def test_shape() -> None:
    cases = [
        rcase("steady", "pass", [("A", 10)], baseline={"status": "compared", "hash": "h", "baseline_k": 10,
                                                       "baseline_n": 10, "k": 10, "n": 10, "p_holm": 1.0, "drop": 0.0}),
        rcase("shaky", "regressed", [("A", 6), ("B", 4)], answers=[("A", 6), ("B", 3)], parse_failures=1,
              baseline={"status": "compared", "hash": "h", "baseline_k": 10, "baseline_n": 10, "k": 6, "n": 10,
                        "p_holm": 0.0422, "drop": 0.4, "fingerprints_changed": True}),
        rcase("fresh", "new", [("x", 10)], baseline={"status": "no_baseline"}),
    ]  # fmt: skip
    text = render_markdown(report(cases))
    lines = text.splitlines()
    assert lines[0] == "<!-- stabilitygate:demo -->" == comment_marker("demo")
    assert lines[1] == "## ❌ LLM stability: 1 regressed; --fail-on regression: the job fails · demo"
    assert "**3 cases**: 1 passed, 1 regressed, 1 new\n" in text  # the counts a run has, nothing else
    footer = text.rsplit("<sub>", 1)[1]  # the field's names for the shares: for those who know them
    assert "TARr@10 0.50 · TARa@10 0.75 · accuracy best 0.90 / worst 0.60" in footer
    assert "12,345 prompt + 678 completion tokens" in footer
    assert "| Case | Unique | Agreement | Parsed | Min cosine | Verdict | Against the baseline |" in text
    assert "| steady | 1 | 10/10 | — | 0.912 | ✅ pass | 10/10 → 10/10 |" in text
    assert "| shaky | 2 | 6/10 | 9/10 | 0.912 | 📉 regressed | 10/10 → 6/10, p = 0.042; fingerprint changed |" in text
    assert "| fresh | 1 | 10/10 | — | 0.912 | 🆕 new | no baseline |" in text
    assert text.count("<details>") == 2 and "steady: pass</summary>" not in text
    assert "██████░░░░ 6/10" in text and "The samples first disagree at token 5." in text
    assert "--update-baseline" in text and text.endswith("</sub>\n")
    page = assert_inert(text)
    assert [t for t, _ in page.tags].count("tr") == 4  # header + one row per case


def test_hostile_completions_stay_text() -> None:
    completions = [(t, 7 - i) for i, t in enumerate(HOSTILE)]
    answers = [("<script>alert(1)</script>", 6), ("@org/team", 4)]
    cases = [
        rcase("hostile", "fail", completions, answers=answers,
              reasons=["answer changed: '<img src=x onerror=alert(1)>' where the baseline had '@org/team' #12"],
              baseline={"status": "compared", "hash": "h", "baseline_k": 10, "baseline_n": 10, "k": 6, "n": 12,
                        "drop": 0.5, "p_holm": 0.01, "answer_changed": True, "kind": "answer",
                        "baseline_modal": {"value": "</details>", "count": 10, "n": 10},
                        "modal": {"value": "<script>x</script>", "count": 6, "n": 12}}),
    ]  # fmt: skip
    text = render_markdown(report(cases, name="x --> <script>alert(1)</script>"))
    assert text.splitlines()[0] == "<!-- stabilitygate:x-script-alert-1-script -->"
    page = assert_inert(text)
    rendered = cmarkgfm.markdown_to_html_with_extensions(text, options=Options.CMARK_OPT_UNSAFE, extensions=EXTENSIONS)
    # Every completion survives verbatim inside its own code block.
    blocks = [html.unescape(b.split(">", 1)[1]) for b in rendered.split("<code")[1:]]
    for hostile in HOSTILE[:5]:  # the top five are shown
        assert any(b.startswith(hostile + "\n</code>") for b in blocks), hostile
    assert "<script>alert(1)</script>" in "".join(page.prose)  # shown as text in the answers list
    assert "(6 distinct in 27 samples, 1 not shown)" in text


def test_huge_completion_is_cut_and_says_so() -> None:
    huge = ("lorem ipsum " * 9000)[:100_000]
    text = render_markdown(report([rcase("big", "fail", [(huge, 3), ("short", 1)])]))
    assert len(text) < 10_000
    assert "cut here, 98,000 more characters" in text
    assert_inert(text)


def test_three_hundred_hostile_cases_fit_under_the_limit() -> None:
    big = "`" * 50 + "<script>alert(1)</script> @org/team " + "x" * 100_000
    cases = [
        rcase(f"case-{i:03d}", ("fail", "regressed", "new", "pass")[i % 4], [(big, 5), (HOSTILE[i % 6], 5)],
              answers=[("@org/team", 5), ("<img src=x onerror=alert(1)>", 5)],
              reasons=[f"reason {i} with <b>html</b> and @org/team"] * 3)
        for i in range(300)
    ]  # fmt: skip
    text = render_markdown(report(cases))
    assert len(text.encode("utf-16-le")) // 2 < GITHUB_LIMIT
    assert "left out to keep this comment under GitHub's size limit" in text
    assert_inert(text)
    assert render_markdown(report(cases)) == text  # deterministic


def test_rows_go_last_and_passing_rows_first() -> None:
    cases = [rcase(f"a-passing-case-with-a-long-name-{i:04d}", "pass", [("A", 10)]) for i in range(1000)]
    cases[500] = rcase("the-regression", "regressed", [("A", 6), ("B", 4)])
    text = render_markdown(report(cases))
    assert len(text) < GITHUB_LIMIT
    assert "| the-regression |" in text and "<summary>📉 the-regression: regressed</summary>" in text
    assert "more cases (" in text and "pass) left out of the table" in text
    assert_inert(text)


def test_small_budget_drops_details_before_rows() -> None:
    cases = [rcase(f"c{i}", "fail", [("x" * 300, 5), ("y" * 300, 5)]) for i in range(10)]
    text = render_markdown(report(cases), max_chars=3_000)
    assert len(text) <= 3_000
    assert text.count("| 📉") + text.count("| ❌") == 10  # every row kept
    assert "Details of " in text and "more cases left out" in text


@pytest.mark.parametrize("verdict", ["pass", "error"])
def test_header_per_run_verdict(verdict: str) -> None:
    text = render_markdown(report([rcase("a", "pass", [("A", 10)])], verdict=verdict))
    assert text.splitlines()[1] == (
        "## ✅ LLM stability: pass · demo"
        if verdict == "pass"
        else "## 🛑 LLM stability: could not measure: the job fails (exit 3) · demo"
    )


@pytest.mark.parametrize("fail_on", ["never", "fail"])
def test_a_finding_the_job_does_not_fail_on_is_said_apart_from_the_jobs_outcome(fail_on: str) -> None:
    data = report_dict([rcase("r", "regressed", [("A", 6), ("B", 4)]), rcase("p", "pass", [("A", 10)])], exit_code=0)
    data["run"]["fail_on"] = fail_on
    heading = render_markdown(Report.from_dict(data)).splitlines()[1]
    assert heading == f"## ⚠️ LLM stability: 1 regressed; --fail-on {fail_on}: the job passes · demo"
    said = heading.replace(f"--fail-on {fail_on}", "SETTING")  # the setting named, and nothing else
    assert not re.search(r"\bfail\b", said) and "❌" not in heading  # no "fail" while the job passes


def test_a_warned_case_shows_its_warning_in_the_header_row_and_details() -> None:
    warned = rcase("w", "warn", [("A", 6), ("B", 4)])
    text = render_markdown(report([warned, rcase("p", "pass", [("A", 10)])], verdict="pass"))
    assert text.splitlines()[1] == "## ⚠️ LLM stability: 1 warned; --fail-on regression: the job passes · demo"
    assert "| w |" in text and "⚠️ warn" in text
    assert "1 warned" in text
    assert "<details>" in text and "w" in text.split("<details>", 1)[1]


def test_from_a_real_judgement() -> None:
    def case(cid: str) -> ResolvedCase:
        return ResolvedCase(
            id=cid, line=2, messages=(Message(role="user", content=cid),),
            provider=ProviderConfig(type="openai", model="m"), thresholds=Thresholds(),
            answer=AnswerSpec(choice=["A", "B"]), expected=None, samples=10,
        )  # fmt: skip

    def measured(cid: str, a: int) -> CaseMeasurement:
        rows = [("A", a), ("B", 10 - a)] if a < 10 else [("A", 10)]
        return typed(CaseMeasurement, dict(
            id=cid, samples_requested=10, samples_ok=10, sample_errors=0,
            metrics={"unique_completions": len(rows), "parsed_agreement": a / 10, "cosine_min": None},
            completions=[{"text": f"({x})", "count": c} for x, c in rows],
            answers=[{"answer": x, "count": c} for x, c in rows], fingerprints=[],
        ))  # fmt: skip

    cases = [case("a"), case("b")]
    baseline = baseline_from_run(cases, [measured("a", 10), measured("b", 10)], "demo")
    now = [measured("a", 6), measured("b", 10)]
    verdicts = judge_cases(cases, now, baseline, Regression())
    full = build_report(
        SuiteRef("s.yml", "demo"), cases, now, verdicts, summary=SuiteNumbers(), counts=verdict_counts(verdicts),
        run=RunFacts(BaselineFacts("s.baseline.json", "compared"), None, "regression"),
        exit_code=exit_code(verdicts, "regression", could_not_measure=False),
        verdict=run_verdict(verdicts, fatal=False),
    )  # fmt: skip
    text = render_markdown(full)
    assert "| a | 2 | 6/10 on the choice | — | — | 📉 regressed | 10/10 → 6/10, p = 0.043 |" in text
    assert "agreement 6/10 against 10/10 in the baseline: a drop of 0.40, p = 0.043 after correction" in text
    assert_inert(text)


def test_run_notes_from_the_pipeline() -> None:
    data = report_dict([rcase("a", "new", [("A", 10)])])
    data["run"] = {
        "sampling": {"interrupted": True, "fatal_error": "authentication refused (HTTP 401)", "requests": 3,
                     "retries": 0, "budget_exhausted": False},
        "baseline": {"path": ".stability/suite.baseline.json", "status": "updated"},
        "fail_on": "regression",
    }  # fmt: skip
    text = render_markdown(Report.from_dict(data))
    assert "The run was interrupted" in text
    assert "The run stopped: authentication refused (HTTP 401)" in text
    assert "commit .stability/suite.baseline.json" in text
    assert "New or changed cases are not compared yet" not in text  # the baseline was just recorded


def test_the_remedies_reach_the_case_details_and_a_variants_section_stays_inert() -> None:
    shaky = rcase("shaky", "regressed", [("A", 6), ("B", 4)], answers=[("A", 6), ("B", 4)],
                  baseline={"status": "compared", "hash": "h", "baseline_k": 10, "baseline_n": 10, "k": 6, "n": 10,
                            "p_holm": 0.0422, "drop": 0.4})  # fmt: skip
    shaky["diagnostics"] = {
        "diagnosis": "the decision itself varies; the texts split at token 1: '<script>' over '@org/team'",
        "suggestion": "Make it strict | now",
    }
    shaky["variants"] = [
        {"name": "strict", "overrides": ["params"], "samples_requested": 10, "samples_ok": 10, "sample_errors": 0,
         "unique_completions": 1, "answers": 1, "parsed_agreement": 1.0, "tokens": 1234,
         "primary": {"metric": "parsed_agreement", "k": 10, "n": 10}, "p_value": 0.04, "p_holm": 0.04,
         "significant": True, "change": "better", "accuracy": 0.9, "modal": "A <b>", "modal_count": 10},
        {"name": "broken", "overrides": ["provider"], "samples_requested": 10, "samples_ok": 0, "sample_errors": 10,
         "error": "10 of 10 samples failed: <img src=x onerror=alert(1)> | `x` @org/team"},
    ]  # fmt: skip
    data = report_dict([shaky])
    data["run"]["conditions"] = {
        "cases": {"shaky": {"provider": "openai", "concurrency": 8, "params": {}, "fingerprints": []}},
        "differ": {"shaky": ["baseline drawn at concurrency 1, this run at 8"]},
        "advice": {},
    }
    text = render_markdown(Report.from_dict(data))
    assert (
        "| shaky | 2 | 6/10 | — | 0.912 | 📉 regressed | 10/10 → 6/10, p = 0.042; "
        "baseline drawn at concurrency 1, this run at 8 |" in text
    )
    assert "- Drawn otherwise than the baseline: baseline drawn at concurrency 1, this run at 8." in text
    assert "- Suggestion: Make it strict \\| now" in text  # escaped: it would split a table cell elsewhere
    assert "🧪 Variants: 2 measured beside 1 case, 1 significantly better than as written</summary>" in text
    assert "| shaky | as written | 2 | — | — | — | 'A' 6/10 | — | agreement 6/10 |" in text
    assert (  # what the remedy may cost beside what it buys: accuracy and the answer it settles on
        "| | strict (params) | 1 | 1.00 | — | 0.90 | 'A &lt;b&gt;' 10/10 | 1,234 | agreement 10/10 against 6/10: "
        "better, p = 0.04 after Holm (significant) |" in text.replace("|  |", "| |")
    )
    page = assert_inert(text)
    assert [t for t, _ in page.tags].count("tr") == 2 + 4  # the case table, then the variants' header and rows
    assert "<script>" in "".join(page.prose) and "onerror" in "".join(page.prose)  # shown as text
