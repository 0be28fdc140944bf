"""Number words from zero to a million; anything that goes on past what is read is not read."""

from __future__ import annotations

import pytest

from stabilitygate.measure.numbers.words import read_number_words


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("zero", 0),
        ("seven.", 7),
        ("Nineteen apples", 19),
        ("twenty-one", 21),
        ("forty two", 42),
        ("ninety", 90),
        ("a hundred", 100),
        ("one hundred and five", 105),
        ("three hundred twelve", 312),
        ("a thousand", 1000),
        ("twelve thousand, and five", 12005),
        ("two hundred thousand", 200_000),
        ("nine hundred ninety-nine thousand nine hundred and ninety-nine", 999_999),
        ("a million", 1_000_000),
        ("one million", 1_000_000),
    ],
)
def test_words_read_as_their_value(text: str, value: int) -> None:
    found = read_number_words(text, 0)
    assert found is not None and found[0] == value


def test_the_end_offset_is_after_the_last_word_used() -> None:
    text = "is one hundred and five apples"
    assert read_number_words(text, 3) == (105, len("is one hundred and five"))
    assert read_number_words("one hundred and then", 0) == (100, len("one hundred"))


@pytest.mark.parametrize(
    "text",
    ["two million", "seven point five", "three quarters", "a lot", "x", "", "hundred", "eleventh", "one of them"],
)
def test_numbers_past_a_million_fractions_and_non_numbers_read_nothing(text: str) -> None:
    assert read_number_words(text, 0) is None


def test_one_as_a_pronoun_is_no_number() -> None:
    assert read_number_words("one that works", 0) is None
    assert read_number_words("one apple", 0) == (1, 3)
    assert read_number_words("seven of them", 0) == (7, 5)
