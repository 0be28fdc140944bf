"""A text's numbers read once: digits and words in order, notations merged, marks set, links found."""

from __future__ import annotations

from fractions import Fraction

from stabilitygate.measure.numbers.links import LinkKind
from stabilitygate.measure.numbers.scan import scan


def test_digits_and_words_come_in_text_order_with_notations_merged() -> None:
    numbers = scan("Seven boxes of 2.5 million, or about 3 × 10^6, twenty-one left")
    assert [t.value for t in numbers.tokens] == [7, 2_500_000, 3_000_000, 21]
    assert numbers.links[2].kind is LinkKind.APPROX


def test_marks_are_set_on_the_tokens() -> None:
    numbers = scan("between 4 and 5, then 2√3 and 7")
    assert [(t.text, t.not_one is not None) for t in numbers.tokens] == [
        ("between 4 and 5", True),
        ("2", True),
        ("3", True),
        ("7", False),
    ]
    assert numbers.tokens[-1].value == Fraction(7)


def test_decimal_comma_reaches_the_lexer() -> None:
    assert [t.value for t in scan("1,234", decimal_comma=True).tokens] == [Fraction(1234, 1000)]
