"""The suite's regexes run under a time limit (issue 25, item 6)."""

from __future__ import annotations

import pytest

from stabilitygate import patterns
from stabilitygate.errors import BadInput


def test_a_pattern_that_backtracks_without_end_is_bad_input_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(patterns, "TIME_LIMIT_S", 0.05)
    with pytest.raises(
        BadInput, match=r"answer\.regex: the pattern '\^\(a\|aa\)\+\$' ran past 0\.05 s on a text of 61"
    ):
        patterns.search("^(a|aa)+$", "a" * 60 + "b", where="answer.regex")


def test_a_linear_pattern_matches_as_re_would() -> None:
    match = patterns.search(r"answer: (\w+)", "the answer: B, surely", where="answer.regex")
    assert match is not None and match.group(1) == "B" and match.re.groups == 1
    assert patterns.search("^(a+)+$", "a" * 5000 + "b", where="answer.regex") is None  # no blow-up here


def test_a_pattern_that_does_not_compile_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="missing"):
        patterns.compile_pattern("(unclosed")
