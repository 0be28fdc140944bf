"""The action's reporting pieces that stand alone: the summary of a run that wrote no report."""

from __future__ import annotations

from stabilitygate.github import reporting


def test_fallback_summary_redacts_secrets_and_fences_untrusted_text() -> None:
    tail = ["::add-mask::x", "stabilitygate: error: refused key sk-live-123456789 ``` here", ""]
    summary = reporting.fallback_summary(3, tail, ["sk-live-123456789"])
    assert "sk-live-123456789" not in summary and "refused key *** ``` here" in summary
    assert "exit code 3 (could not measure)" in summary
    assert "\n````\n" in summary  # a fence longer than the text's own backtick run
    assert "::add-mask::" not in summary
