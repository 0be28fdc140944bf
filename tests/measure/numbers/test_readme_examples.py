"""Every example the README gives for `number:` reads as the README says (None: refused)."""

from __future__ import annotations

import pytest

from stabilitygate.measure.canonical import NoAnswer
from stabilitygate.measure.numbers import read_number

REFUSED = None
EXAMPLES = [
    ('{"answer": 42, "confidence": 0.95}', 42),
    ('{"answer": "42 apples"}', 42),
    ('{"total_cost": 45.5, "items": 3}', REFUSED),
    ("I can't determine how many of the 12 were eaten", REFUSED),
    ("It cannot be determined: 4", REFUSED),
    ("It has no solution since 3 > 2", REFUSED),
    ("I can't be sure, but the answer is 12", 12),
    ("I can't determine it; the answer would be 36", REFUSED),
    ("the answer to question 3 is 17", 17),
    ("The answer is 7 × 9", 63),
    ("\\boxed{4\\sqrt{2}}", REFUSED),
    ("\\boxed{(2, -1)}", REFUSED),
    ("\\boxed{3x^2+2x}", REFUSED),
    ("the answer is x + 3", REFUSED),
    ("the answer is 7 to 9 days", REFUSED),
    ("So the 12th term is 45.", 45),
    ("```\nprint(5*6)\n```\nOutput: 30\n\nThe loop runs 5 times", 30),
    ("x = 27. Check: 15 + 27 = 42 ✓", 27),
    ("6 hours. Working alone, Alice would need 10 hours and Ben 15.", 6),
    ("15 birds, up from 9", 15),
    ("12, not 15", 12),
    ("pages 10-12", REFUSED),
    ("30, maybe 35", REFUSED),
    ("x = 2 or x = −3", REFUSED),
    ("x = 1 and x = 5", REFUSED),
    ("x = 2, y = 3", REFUSED),
    ("0.45, or 45%", 0.45),
    ("90 minutes, or 1.5 hours", 90),
    ("6 feet 2 inches, or 74 inches", 74),
    ("95 minutes, which is 1 hour and 35 minutes", 95),
    ("between 4 and 5 boxes", REFUSED),
    ("12–15 minutes", REFUSED),
    ("rose from 20 to 35", 35),
    ("3:2", REFUSED),
    ("4:35 PM", REFUSED),
    ("3:42:15", REFUSED),
    ("±4", REFUSED),
    ("2√3", REFUSED),
    ("2\\pi", REFUSED),
    ("5a + 3b", REFUSED),
    ("2^n", REFUSED),
    ("2 h 15 min", REFUSED),
    ("45 dollars and 50 cents", 45.5),
    ("1.234.567,50", 1234567.5),
    ("12 345,67", 12345.67),
    ("\\boxed{10,\\!080}", 10080),
    ("12,34,56,789", 123456789),
    ("17,5", 17.5),
    ("0,125", 0.125),
    ("1,2345", 1.2345),
    ("1,234", 1234),
    ("2.350", 2.35),
    ("01.02.2024", REFUSED),
    ("2024-01-15", REFUSED),
    ("8²", 64),
    ("4.8 × 10⁻¹⁹", 4.8e-19),
    ("5 \\cdot 10^{-3}", 0.005),
    ("1億2千万", 120_000_000),
    ("$85k", 85_000),
    ("$3.2B", 3_200_000_000),
    ("2 pounds 50 pence", 2.5),
    ("two million", 2_000_000),
    ("seven point five", 7.5),
    ("two and a half", 2.5),
    ("came in third", 3),
    ("the second half", REFUSED),
    ("the fourth day", REFUSED),
]


@pytest.mark.parametrize(("text", "value"), EXAMPLES)
def test_the_readmes_number_examples(text: str, value: float | None) -> None:
    try:
        read = read_number(text)
    except NoAnswer:
        read = None
    assert read == value


@pytest.mark.parametrize(("text", "value"), [("1,5", 1.5), ("1,234", 1.234), ("1.234", 1234), ("1.5", 1.5)])
def test_the_readmes_decimal_comma_examples(text: str, value: float) -> None:
    assert read_number(text, decimal_comma=True) == value


def test_an_english_number_is_refused_with_decimal_comma() -> None:
    with pytest.raises(NoAnswer):
        read_number("1,234.50", decimal_comma=True)
