"""Lexing: every way a number is written gives its exact value; versions and dates give none."""

from __future__ import annotations

from fractions import Fraction

import pytest

from stabilitygate.measure.numbers.tokens import number_tokens


def values(text: str) -> list[Fraction | None]:
    return [token.value for token in number_tokens(text)]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("3/4", Fraction(3, 4)),
        ("-3/4", Fraction(-3, 4)),
        ("2/3 of it", Fraction(2, 3)),
        ("\\frac{5}{8}", Fraction(5, 8)),
        ("\\dfrac{5}{8}", Fraction(5, 8)),
        ("\\tfrac{5}{8}", Fraction(5, 8)),
        ("\\frac34", Fraction(3, 4)),
        ("-\\frac{1}{2}", Fraction(-1, 2)),
        ("\\frac{1.5}{3}", Fraction(1, 2)),
        ("3 1/4 miles", Fraction(13, 4)),
        ("-3 1/4", Fraction(-13, 4)),
        ("3\\frac{1}{4}", Fraction(13, 4)),
        ("3½ cups", Fraction(7, 2)),
        ("¾", Fraction(3, 4)),
    ],
)
def test_fractions_and_mixed_numbers_read_exactly(text: str, value: Fraction) -> None:
    assert values(text) == [value]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("2 500 000", 2_500_000),
        ("2\u2009500\u2009000", 2_500_000),  # thin space
        ("2\u202f500", 2500),  # narrow no-break space
        ("2\u00a0500.5", Fraction(5001, 2)),  # no-break space
        ("2\\,500", 2500),  # LaTeX thin space
        ("1{,}000", 1000),  # LaTeX comma
        ("1,234,567.50", Fraction("1234567.5")),
    ],
)
def test_thousands_separators_join_groups_of_three(text: str, value: Fraction) -> None:
    assert values(text) == [value]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2 50", [2, 50]),  # a group of two digits: two numbers
        ("In 2023 500 came", [2023, 500]),  # the first group has four digits
        ("1,2,3", [1, 2, 3]),  # commas that separate neither thousands nor decimals: a list
        ("5/0", [5, 0]),  # no fraction over zero: two numbers
        ("3 5/4", [3, Fraction(5, 4)]),  # not a proper fraction: no mixed number
        ("12-7", [12, 7]),
    ],
)
def test_what_stays_separate_numbers(text: str, expected: list[Fraction]) -> None:
    assert values(text) == expected


@pytest.mark.parametrize("text", ["12/25/2023", "1/2/3", "2024-01-15", "3.11.2", "01.02.2024", "v2", "H2O"])
def test_dates_versions_and_words_hold_no_number(text: str) -> None:
    assert number_tokens(text) == []


def test_a_token_keeps_how_it_was_written() -> None:
    (rounded,) = number_tokens("about 0.67 of it")
    assert (rounded.text, rounded.decimals, rounded.truncated, rounded.plain_integer) == ("0.67", 2, False, False)
    (cut,) = number_tokens("0.666... or so")
    assert (cut.text, cut.value, cut.truncated) == ("0.666...", Fraction(333, 500), True)
    (fraction,) = number_tokens("2/3")
    assert fraction.decimals is None  # an exact form, never a rounding
    assert [t.plain_integer for t in number_tokens("2031 and $2031 and 2,031")] == [True, False, False]


def test_an_exponent_past_a_thousand_has_no_value_held() -> None:
    (huge,) = number_tokens("1e5000")
    assert huge.value is None
    assert values("1e999") == [Fraction(10) ** 999]


# -- issue 37: numbers past any plausible answer are out of range, never a crash --------------------------


@pytest.mark.parametrize(
    "text",
    [
        "1e" + "9" * 4301,  # int() refuses an exponent past 4,300 digits: a ValueError before issue 37
        "1e-" + "9" * 4301,
        "9" * 4301 + "/7",
        "3 " + "1" * 4301 + "/" + "7" * 4302,
        "\\frac{" + "1" * 4301 + "}{3}",
        "1" * 4301 + "½",
        "1" * 1001,
        "0." + "0" * 1000 + "1",  # read 0.0 before, after work the square of its length
        "1." + "9" * 1000,  # read 2.0
        "1,2," * 500 + "3",  # a run of more than 1,000 digits: whatever it means, out of range
    ],
    ids=[
        "exponent",
        "negative-exponent",
        "fraction",
        "mixed",
        "latex",
        "vulgar",
        "integer",
        "small",
        "decimal",
        "list",
    ],
)
def test_a_number_of_more_than_a_thousand_digits_has_no_value_held(text: str) -> None:
    (huge,) = number_tokens(text)
    assert huge.value is None and huge.start == 0 and huge.end == len(text)


def test_a_thousand_digits_are_still_read() -> None:
    assert values("9" * 1000) == [Fraction(10**1000 - 1)]
    assert values("1e-1000") == [Fraction(1, 10**1000)]


def test_a_limit_stops_the_lexer_early() -> None:
    assert len(number_tokens("1 " * 100, limit=7)) == 7


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("at 3 pm.", "3 pm is a clock time, not one number"),  # issue 38: an hour with am/pm or o'clock
        ("10 a.m. sharp", "10 a.m. is a clock time, not one number"),
        ("7 o'clock", "7 o'clock is a clock time, not one number"),
        ("ends at 9:42 pm.", "9:42 pm is a clock time, not one number"),  # the full stop ends the sentence
    ],
)
def test_a_clock_time_is_refused(text: str, reason: str) -> None:
    (clock,) = number_tokens(text)
    assert clock.not_one == reason


def test_amps_are_no_clock() -> None:
    assert values("5 amps") == [Fraction(5)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("is - $30.", [Fraction(-30)]),  # issue 38: a minus written loosely before an amount
        ("savings: –$150", [Fraction(-150)]),
        ("balance: – $45", [Fraction(-45)]),
        ("$40 - $55 = -$15", [Fraction(40), Fraction(55), Fraction(-15)]),  # a number before it: subtraction
        ("pages 12–15", [Fraction(12), Fraction(15)]),  # a range
    ],
)
def test_a_minus_before_a_currency_sign(text: str, expected: list[Fraction]) -> None:
    assert values(text) == expected
