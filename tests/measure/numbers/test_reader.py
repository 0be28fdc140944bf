"""`number: true` end to end, one test per rule of docs/design.md §4.1, in the rules' order."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stabilitygate.measure.canonical import NoAnswer, canonical_fraction
from stabilitygate.measure.numbers import read_number


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("The answer is 3 + 9 = 12.", 12),
        ("Answer = 7 * 9 = 63", 63),
        ("The final answer is 15 - 6 = 9 apples, because 15 - 6 leaves 9", 9),
        ("The answer is 7 × 9.", 63),  # an expression: worked out
        ("The answer is $4 \\times 5 = 20$, not 4", 20),
        ("Answer: 12-7", 12),  # an unspaced dash may be a range: not worked out, as before
    ],
)
def test_an_answer_phrase_before_a_chain_reads_its_result(text: str, value: int) -> None:
    assert read_number(text) == value


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("She ate 1/4 of the cake.", 0.25),
        ("The answer is 7/8.", 0.875),
        ("He poured 5/6 of a litre.", "5/6"),
        ("$\\boxed{\\frac{7}{8}}$", 0.875),
        ("\\boxed{\\dfrac{1}{3}}", "1/3"),
        ("\\boxed{\\tfrac{1}{3}}", "1/3"),
        ("\\boxed{7/8}", 0.875),
        ("The rope is 2 3/4 metres long.", 2.75),
        ("It takes 1 1/3 hours.", "4/3"),
        ("The answer is -2/6.", "-1/3"),  # reduced, sign first
        ("The answer is 6/3.", 2),
    ],
)
def test_fractions_and_mixed_numbers_read_as_their_value(text: str, value: int | float | str) -> None:
    result = read_number(text)
    assert result == value and type(result) is type(value)


@given(st.integers(-(10**6), 10**6), st.integers(1, 10**6), st.sampled_from(["{}/{}", "\\frac{{{}}}{{{}}}"]))
def test_any_fraction_reads_back_as_its_exact_value(numerator: int, denominator: int, form: str) -> None:
    written = form.format(abs(numerator), denominator)
    text = f"The answer is {'-' if numerator < 0 else ''}{written}."
    assert read_number(text) == canonical_fraction(Fraction(numerator, denominator))


@given(st.integers(0, 10**6), st.integers(1, 999), st.integers(2, 1000))
def test_any_mixed_number_reads_back(whole: int, numerator: int, denominator: int) -> None:
    numerator = numerator % denominator or 1
    expected = canonical_fraction(whole + Fraction(numerator, denominator))
    assert read_number(f"It is {whole} {numerator}/{denominator} long") == expected


@pytest.mark.parametrize("text", ["3/4", "0.75", "The answer is \\frac{3}{4}", "0.750", "\\boxed{.75}", "¾"])
def test_equal_values_have_one_canonical_form(text: str) -> None:
    assert read_number(text) == 0.75


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Each gets 1/3 ≈ 0.33 of the pie.", "1/3"),
        ("The share is 5/7 \\approx 0.71", "5/7"),
        ("So 1/6 + 1/6 = 1/3 ≈ 0.333", "1/3"),
        ("That is 1/3 = 0.333... of it", "1/3"),
        ("The answer is 1/7, or about 0.14", "1/7"),
    ],
)
def test_an_exact_form_beside_its_rounding_is_read(text: str, value: str) -> None:
    assert read_number(text) == value


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("6 + 5 = 11. So 11 is the sum of 6 and 5.", 11),
        ("8 × 3 = 24 cookies, baked in 3 batches of 8.", 24),
        ("Each box holds 6 and she has 5 boxes. So she has 30 muffins: 5 boxes of 6.", 30),
        ("He will be 27 in 2040.", 27),
        ("Total: 72 (out of 80 points).", 72),
        ("The result is 64 [8 × 8].", 64),
        # The last number still wins when it is new, or when nothing anchors the answer:
        ("6 + 5 = 11. Then 4 more arrive, so 15 in all.", 15),
        ("She had 5, gave 2 away and got 2 back: she has 5.", 5),
        # Old numbers in a new sentence that does not name the anchor again may be a new step:
        ("She has 10 apples and 5 pears. 10 + 5 = 15 fruits. She gives away 5, so 10 are left.", 10),
        ("In 2031 she turns 41", 41),
        ("In 1999, 12 came", 12),
        ("The war ended in 1945.", 1945),  # a year and nothing else: read
        ("(-12)", -12),  # an aside and nothing else: read
    ],
)
def test_the_answer_stands_before_numbers_that_only_restate(text: str, value: int) -> None:
    assert read_number(text) == value


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("The answer is zero.", 0),
        ("The answer is nine", 9),
        ("The answer is Thirteen.", 13),
        ("The answer is thirty-four.", 34),
        ("The answer is two hundred and six.", 206),
        ("Answer: one thousand", 1000),
        ("The answer is a million.", 1_000_000),
        ("The answer is **twelve** apples", 12),
    ],
)
def test_number_words_after_an_answer_phrase(text: str, value: int) -> None:
    assert read_number(text) == value


def test_number_words_elsewhere_are_not_numbers() -> None:
    with pytest.raises(NoAnswer, match="no number found"):
        read_number("She has seven apples.")
    assert read_number("one of them has 4") == 4


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("The city has 1 250 000 people.", 1_250_000),
        ("It cost $3\u2009499.", 3499),
        ("about 12\u202f000 km", 12_000),
        ("about 12\u00a0000 km", 12_000),
        ("Scores 12 34", 34),  # not groups of three: two numbers
    ],
)
def test_spaces_join_groups_of_three_digits(text: str, value: int) -> None:
    assert read_number(text) == value


@pytest.mark.parametrize(
    "text",
    [
        "Maybe 4 or 5, I am not sure.",
        "It is either 10 or 12.",
        "The answer is 6 or 7.",
        "Somewhere around 3, or maybe 4",
    ],
)
def test_a_hedge_between_two_numbers_is_a_parse_failure(text: str) -> None:
    with pytest.raises(NoAnswer, match="no committed answer"):
        read_number(text)


def test_a_hedge_that_then_commits_is_read() -> None:
    assert read_number("Is it 4 or 5? 2 + 3 = 5.") == 5
    assert read_number("The answer is 3.14, or 22/7.") == 3.14  # one answer, written twice


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Python 3.11.2 printed 7", 7),  # versions are no numbers
        ("Released 01.02.2024, it sold 9", 9),  # dotted dates neither
        ("Due 12/25/2023, it sold 9", 9),  # nor slash dates
        ("2024-01-15", 15),  # a dashed date reads as before
        ("pages 10-12", 12),  # a range: its end, as before
        ("She came 3rd", 3),  # an ordinal reads its digits, as before
    ],
)
def test_versions_dates_ranges_and_ordinals_read_as_before(text: str, value: int) -> None:
    assert read_number(text) == value


def test_a_slash_date_alone_is_no_number() -> None:
    with pytest.raises(NoAnswer, match="no number found"):
        read_number("It was due on 12/25/2023")


def test_long_texts_read_in_linear_time() -> None:
    # Quadratic work at this size would take minutes; the asserts check that it still reads right.
    filler = ". " + " " * 20_000 + "(" * 5_000 + " 3 + 4 or " * 2_000
    assert read_number("So 13" + filler + "= 7") == 7
    assert read_number("The answer is " + "one " * 20_000) == 1
