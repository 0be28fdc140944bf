"""A text's numbers read once: digits and words in order, notations merged, marks set, links found."""

from __future__ import annotations

import re
from collections.abc import Iterator
from fractions import Fraction

import pytest

from stabilitygate.measure.canonical import NoAnswer
from stabilitygate.measure.numbers import tokens, words
from stabilitygate.measure.numbers.links import LinkKind
from stabilitygate.measure.numbers.scan import MAX_NUMBERS, scan
from stabilitygate.measure.numbers.tokens import NumberToken


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


@pytest.mark.parametrize(
    "unit", ["2^", "1 ", "one ", "1e9 ", "3/4 ", "5 m^2 ", "-$5 ", "(1, 2) "], ids=lambda unit: unit.strip()
)
def test_a_text_of_more_numbers_than_any_answer_holds_is_refused_after_lexing_a_bounded_count(
    unit: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 37: "2^2^2..." cost about 20 s of CPU per MiB. The lexer now stops one past the bound,
    # so the work is bounded whatever the text's length (counted here, not timed).
    lexed = _counting(monkeypatch)
    text = unit * (1024 * 1024 // len(unit))
    with pytest.raises(NoAnswer, match="too many numbers to take one as the answer"):
        scan(text)
    assert lexed.count <= 3 * (MAX_NUMBERS + 1)  # a tuple's members are lexed too, two at most


def test_a_text_of_as_many_numbers_as_the_bound_is_read() -> None:
    assert len(scan("1 " * (MAX_NUMBERS // 2) + "one " * (MAX_NUMBERS // 2)).tokens) == MAX_NUMBERS


class _Count:
    count = 0


def _counting(monkeypatch: pytest.MonkeyPatch) -> _Count:
    """Count the tokens the lexers hand over, digits and words."""
    counted = _Count()
    tokens_of, read_words = tokens._tokens_of, words.read_number_words

    def each_match(match: re.Match[str], decimal_comma: bool) -> Iterator[NumberToken]:
        for token in tokens_of(match, decimal_comma):
            counted.count += 1
            yield token

    def each_word(text: str, pos: int) -> tuple[Fraction, int] | None:
        counted.count += 1
        return read_words(text, pos)

    monkeypatch.setattr(tokens, "_tokens_of", each_match)
    monkeypatch.setattr(words, "read_number_words", each_word)
    return counted
