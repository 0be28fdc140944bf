"""The most common cause of failed samples: the budget's note set aside, said on one line."""

from __future__ import annotations

from stabilitygate.results import ErrorCount
from stabilitygate.sampling.causes import BUDGET_NOTE, CAUSE_CHARS, Cause, most_common_cause

REFUSED = "http_500: HTTP 500 from http://h/v1/chat/completions: server error - Input should be 'text' or 'json_object'"


def test_a_cause_cut_short_by_the_budget_is_the_same_cause() -> None:
    """Before, "... (request budget exhausted)" split one cause in two and "the budget ran out" hid both."""
    errors = [
        ErrorCount("timeout: no reply within 5 s", 3),
        ErrorCount(REFUSED, 2),
        ErrorCount(REFUSED + BUDGET_NOTE, 2),
    ]
    assert most_common_cause(errors) == Cause(REFUSED, 4, 7)


def test_a_tie_goes_to_the_first_written_and_none_failed_is_no_cause() -> None:
    assert most_common_cause([ErrorCount("b", 2), ErrorCount("a", 2)]) == Cause("b", 2, 4)
    assert most_common_cause([]) is None


def test_the_cause_is_one_line_of_bounded_length() -> None:
    (cause,) = [most_common_cause([ErrorCount("x\n" * 1000, 1)])]
    assert cause is not None and "\n" not in cause.error and len(cause.error) == CAUSE_CHARS


def test_the_sentence_counts_what_the_cause_accounts_for() -> None:
    assert Cause(REFUSED, 4, 7).said() == f"7 samples failed, most often (4 of them): {REFUSED}"
    assert Cause(REFUSED, 3, 3).said() == f"3 samples failed, all with: {REFUSED}"
    assert Cause(REFUSED, 1, 1).said() == f"1 sample failed, with: {REFUSED}"
