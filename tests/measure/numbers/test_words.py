"""Number words: cardinals, dozens, fractions and decimals read out, ranking ordinals; pronouns are no numbers."""

from __future__ import annotations

from fractions import Fraction

import pytest

from stabilitygate.measure.numbers.words import read_number_words, word_tokens


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
        ("two million", 2_000_000),  # was not read before issue 26: numbers past a million are read
        ("two million three hundred thousand and five", 2_300_005),
        ("three billion", 3 * 10**9),
        ("seven point five", Fraction(15, 2)),  # was not read: decimals read out are read
        ("zero point two five", Fraction(1, 4)),
        ("three quarters", Fraction(3, 4)),  # was not read: fractions in words are read
        ("two thirds", Fraction(2, 3)),
        ("a fifth", Fraction(1, 5)),
        ("one and a half", Fraction(3, 2)),
        ("two and three quarters", Fraction(11, 4)),
        ("a dozen", 12),
        ("two dozen", 24),
        ("half a million", 500_000),
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
    ["seven point", "twenty-five hundredths", "a lot", "x", "", "hundred", "eleventh", "one of them", "a car"],
)
def test_what_goes_on_past_what_is_read_and_non_numbers_read_nothing(text: str) -> None:
    assert read_number_words(text, 0) is None


def test_one_as_a_pronoun_is_no_number() -> None:
    assert read_number_words("one that works", 0) is None
    assert read_number_words("one apple", 0) == (1, 3)
    assert read_number_words("seven of them", 0) == (7, 5)


def values(text: str) -> list[Fraction | None]:
    return [token.value for token in word_tokens(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Jake has twenty-one marbles left.", [21]),
        ("She bought a dozen eggs.", [12]),
        ("They ate half of the pizza and half a cake.", [Fraction(1, 2), Fraction(1, 2)]),
        ("There were none left.", [0]),
        ("Three went home, so seven stayed.", [3, 7]),
        ("Lena finishes fourth in the race.", [4]),
        ("He came in third.", [3]),
        ("She is in second place.", [2]),
    ],
)
def test_words_are_numbers_anywhere(text: str, expected: list[Fraction]) -> None:
    assert values(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "No one came, and each one left; one of them stayed.",  # pronouns
        "The team scored in the second half.",  # a half that names a part, an ordinal that names
        "On the fourth day it rained.",
        "First, add the flour.",
        "None of the above.",
        "a car, an apple",
    ],
)
def test_words_that_are_no_numbers(text: str) -> None:
    assert values(text) == []


def test_a_word_token_spans_its_words() -> None:
    (token,) = word_tokens("She had one hundred and five sheep.")
    assert (token.text, token.start, token.value) == ("one hundred and five", 8, 105)
