"""Checks, remarks and comparisons after the answer: the spans whose numbers are passed over."""

from __future__ import annotations

import pytest

from stabilitygate.measure.numbers.commentary import commentary_spans
from stabilitygate.measure.numbers.context import conclusion_starts


def passed(text: str) -> list[str]:
    return [text[a:b].strip() for a, b in commentary_spans(text, conclusion_starts(text))]


@pytest.mark.parametrize(
    ("text", "check"),
    [
        ("x = 27. Check: 15 + 27 = 42", "Check: 15 + 27 = 42"),
        ("It is 84.\n\nVerification: 84 ÷ 7 = 12", "Verification: 84 ÷ 7 = 12"),
        ("y = 9. Let's verify: 3(9) − 7 = 20.", "Let's verify: 3(9) − 7 = 20."),
        ("80 km/h. Double-checking: 80 × 3 = 240", "Double-checking: 80 × 3 = 240"),
        ("She needs 5.\nSanity check: 8 × 25 = 200", "Sanity check: 8 × 25 = 200"),
    ],
)
def test_a_check_runs_to_the_end(text: str, check: str) -> None:
    assert check in passed(text)


def test_a_check_ends_where_a_conclusion_begins() -> None:
    text = "n = 11. Check: 2·11 + 5 = 27. So n = 11 again."
    assert passed(text) == ["Check: 2·11 + 5 = 27. So"]  # up to the conclusion's first word


def test_a_ticked_line_is_a_check() -> None:
    assert passed("It is 12.\n12 + 8 = 20 ✓\nDone") == ["12 + 8 = 20 ✓"]


@pytest.mark.parametrize(
    "remark",
    [
        "For comparison, a hybrid would use about 20 liters.",
        "Fun fact: that is roughly a 10 by 10 room.",
        "In general, n disks need 2^n − 1 moves.",
        "Working alone, Alice would need 10 hours.",
        "Note that if she had skipped lunch, she would have $57.",
        "She could finish sooner by reading 50 pages a day instead of 40.",
        "Note: 1 km is 1000 m.",  # a colon and a space (before issue 38 the opener needed a letter after ":")
        "Tip: for 3 or more items, multiply first.",
        "Keep in mind that 1 foot is 12 inches.",
        "If you'd like, I can walk you through steps 2 and 3.",  # issue 38: offers to go on
        "Want me to break down parts 1 and 2 further?",
        "I could also give you 5 similar exercises.",
        "Let me know if you have 2 or 3 more questions!",
        "Do you need the other 2 items as well?",  # a question after the answer asks, it does not answer
    ],
)
def test_remarks_are_passed_over(remark: str) -> None:
    assert remark in passed(f"The answer stands at 6. {remark}")


@pytest.mark.parametrize(
    "sentence",
    ["If she gives away 5, she would have 7.", "So she would have 15 left.", "Then 4 more arrive, 15 in all."],
)
def test_a_step_that_supposes_nothing_else_is_no_remark(sentence: str) -> None:
    assert passed(f"She has 12. {sentence}") == []


@pytest.mark.parametrize(
    ("text", "comparison"),
    [
        ("15 birds, up from 9 on Monday.", ", up from 9 on Monday"),
        ("She has 12, not 15.", ", not 15"),
        ("Use 50 pages instead of 40.", "instead of 40"),
        ("She is 12 years old, 3 years older than her brother.", ", 3 years older than her brother"),
        ("A total of 56 people came, including 8 children.", ", including 8 children"),
    ],
)
def test_a_comparison_runs_to_the_end_of_its_clause(text: str, comparison: str) -> None:
    assert comparison.strip(", ") in [span.strip(", ") for span in passed(text)]
