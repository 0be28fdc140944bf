"""Notations merged into one number: powers, × 10^n, magnitude words, CJK magnitudes, minor units."""

from __future__ import annotations

from fractions import Fraction

import pytest

from stabilitygate.measure.numbers.scan import scan


def values(text: str) -> list[Fraction | None]:
    return [token.value for token in scan(text).tokens]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("2^{10}", 1024),
        ("2^10", 1024),
        ("8²", 64),
        ("6.02 × 10^23", Fraction(602) * 10**21),
        ("6.02 x 10^23", Fraction(602) * 10**21),
        ("4.8 × 10⁻¹⁹", Fraction(48, 10**20)),
        ("$3 \\times 10^{8}$", 3 * 10**8),
        ("5 \\cdot 10^{-3}", Fraction(1, 200)),
        ("1.5×10⁶", 1_500_000),
    ],
)
def test_powers_and_powers_of_ten_are_one_number(text: str, value: Fraction) -> None:
    assert values(text) == [value]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("3.5 million", 3_500_000),
        ("$2.4 billion", 2_400_000_000),
        ("1.3 trillion", 1_300_000_000_000),
        ("5 thousand", 5000),
        ("3 dozen", 36),
        ("8.5 lakh", 850_000),
        ("₹2.3 crore", 23_000_000),
        ("1,8 Millionen", 1_800_000),
        ("4,5 millones", 4_500_000),
        ("2 Mrd.", 2_000_000_000),
        ("2.5万", 25_000),
        ("2.5 万", 25_000),
        ("1.2億", 120_000_000),
        ("120万", 1_200_000),
        ("1億2千万", 120_000_000),
        ("$85k", 85_000),
        ("$3.2B", 3_200_000_000),
        ("€5M", 5_000_000),
    ],
)
def test_magnitude_words_multiply(text: str, value: int) -> None:
    assert values(text) == [value]


@pytest.mark.parametrize(
    ("text", "value"), [("5M", 5), ("3B", 3), ("12 km", 12), ("5 millimetres", 5), ("2 thousandths", 2)]
)
def test_what_is_no_magnitude(text: str, value: int) -> None:
    assert values(text) == [value]  # "M" and "B" count millions only after a currency sign


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("45 dollars and 50 cents", Fraction(91, 2)),
        ("$3 and 75 cents", Fraction(15, 4)),
        ("12 euros 40 cents", Fraction(62, 5)),
        ("2 pounds 50 pence", Fraction(5, 2)),
        ("7 dollars and 5 cents", Fraction(141, 20)),
        ("-$2 and 50 cents", Fraction(-5, 2)),
    ],
)
def test_an_amount_in_major_and_minor_units_is_one_number(text: str, value: Fraction) -> None:
    assert values(text) == [value]


def test_minor_units_need_a_currency() -> None:
    assert values("45 apples and 50 cents") == [45, 50]


def test_a_power_of_a_letter_is_an_expression() -> None:
    (token, *_rest) = scan("2^n − 1 moves").tokens
    assert token.not_one == "2^n is an expression, not one number"


@pytest.mark.parametrize(
    "text",
    [
        "2^" + "9" * 4301,  # int() refused the exponent: a ValueError before issue 37
        "2⁹" + "⁹" * 4301,
        "5" + "万" * 300,  # 10^1200: past the exponents a number may have
        "$" + "1" * 1001 + " and 5 cents",  # the cents of an amount out of range are no amount of their own
    ],
    ids=["power", "superscripts", "cjk", "minor-units"],
)
def test_a_notation_past_any_plausible_answer_has_no_value_held(text: str) -> None:
    (huge,) = scan(text).tokens
    assert huge.value is None and huge.end == len(text)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("The area is 48 m^2.", 48),  # issue 38: a unit's power is part of the unit
        ("g = 9.8 m/s^2", Fraction(98, 10)),
        ("7.9 g/cm^{3}", Fraction(79, 10)),
        ("9.8 m s^-2", Fraction(98, 10)),
        ("8 m**3 of water", 8),
    ],
)
def test_a_units_power_is_no_number(text: str, value: Fraction) -> None:
    assert [t.value for t in scan(text).tokens] == [value]


def test_a_power_of_a_variable_is_still_an_expression() -> None:
    (_, power) = scan("5 x^2").tokens
    assert power.not_one is not None


@pytest.mark.parametrize("times", ["✕", "⨯", "∙"])
def test_more_times_signs_before_a_power_of_ten(times: str) -> None:
    assert [t.value for t in scan(f"4 {times} 10⁶").tokens] == [4_000_000]
