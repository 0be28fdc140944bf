"""The action's reporting pieces that stand alone: the summary of a run that wrote no report, annotations."""

from __future__ import annotations

import pytest

from stabilitygate.github import reporting
from stabilitygate.report.model import CaseResult
from stabilitygate.results import CaseMeasurement


def test_fallback_summary_redacts_secrets_and_fences_untrusted_text() -> None:
    tail = ["::add-mask::x", "stabilitygate: error: refused key sk-live-123456789 ``` here", ""]
    summary = reporting.fallback_summary(3, tail, ["sk-live-123456789"])
    assert "sk-live-123456789" not in summary and "refused key *** ``` here" in summary
    assert "exit code 3 (could not measure)" in summary
    assert "\n````\n" in summary  # a fence longer than the text's own backtick run
    assert "::add-mask::" not in summary


def test_warnings_are_warning_annotations_unless_fail_on_warn_gates_them(capsys: pytest.CaptureFixture[str]) -> None:
    suite = reporting.SuiteInfo(".stability/suite.yml", {"shaky": 4, "broken": 9}, "demo")
    cases = [case_result("shaky", "warn"), case_result("broken", "fail"), case_result("fine", "pass")]
    reporting._annotate(cases[:2], 1, "regression", suite)
    regression = capsys.readouterr().out.splitlines()
    assert [line.split(" ", 1)[0] for line in regression] == ["::warning", "::error"]
    assert "file=.stability/suite.yml,line=4" in regression[0] and "case shaky warn" in regression[0]
    reporting._annotate(cases[:1], 1, "warn", suite)
    assert capsys.readouterr().out.startswith("::error ")  # fail-on warn: the warning failed the job


def case_result(case_id: str, verdict: str) -> CaseResult:
    return CaseResult.of(
        CaseMeasurement.nothing(case_id, 10),
        line=None,
        hash="sha256:0",
        verdict=verdict,  # type: ignore[arg-type]
        reasons=(f"{verdict}: because",),
        primary=None,
        baseline=None,
    )


@pytest.mark.parametrize("closer", ["`" * 255, "`" * 256 + "\n" + "~" * 300], ids=["255-backticks", "both"])
def test_no_log_line_closes_the_fallback_summarys_fence(closer: str) -> None:
    """The fallback summary shows log lines a provider or a command wrote (issue 25, item 2)."""
    from stabilitygate.secrets import Secrets
    from tests.report.test_markdown import parse

    tail = ["stabilitygate: error: the command said:", closer, "## ✅ pass", "<img src=https://evil.example/p.gif>"]
    page = parse(reporting.fallback_summary(3, tail, Secrets()))
    assert [tag for tag, _ in page.tags].count("h2") == 1 and "img" not in [tag for tag, _ in page.tags]
    assert "✅ pass" in "".join(page.code) and "✅ pass" not in "".join(page.prose)
