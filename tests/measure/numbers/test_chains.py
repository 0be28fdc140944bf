"""Chains: grouping, their result before any rounding, exact arithmetic, and the "or" hedge."""

from __future__ import annotations

from fractions import Fraction

import pytest

from stabilitygate.measure.canonical import NoAnswer
from stabilitygate.measure.numbers.chains import Chain, Numbers, hedge, last_value, result
from stabilitygate.measure.numbers.links import links_of
from stabilitygate.measure.numbers.tokens import number_tokens


def numbers_of(text: str) -> Numbers:
    tokens = number_tokens(text)
    return Numbers(text, tokens, links_of(text, tokens))


def whole(text: str) -> tuple[Numbers, Chain]:
    numbers = numbers_of(text)
    (chain,) = numbers.chains
    return numbers, chain


def test_chains_split_where_nothing_links() -> None:
    numbers = numbers_of("4 + 6 = 10. Then 3 or 5, and 2/3 ≈ 0.67")
    assert numbers.chains == [Chain(0, 2), Chain(3, 3), Chain(4, 4), Chain(5, 6)]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("4 + 6 = 10", 10),
        ("6 * 8 = 48", 48),
        ("2 + 3 = 5 = 5.0", 5),
        ("10 = 4 + 6", 10),  # the result written first: the expression after = is worked out
        ("4 + 6", 10),
        ("2 + 3 × 4", 14),  # × before +
        ("1/2 + 1/4", Fraction(3, 4)),
        ("7 ÷ 2 - 1", Fraction(5, 2)),
        ("2/3 ≈ 0.67", Fraction(2, 3)),
        ("1/3 + 1/3 = 2/3 ≈ 0.67", Fraction(2, 3)),
        ("1/3 + 1/3 ≈ 0.67", Fraction(2, 3)),
        ("2/3 = 0.666...", Fraction(2, 3)),  # a cut-short decimal is a rounding
        ("12-7", 12),  # a dash is a range as well as a subtraction: not worked out
        ("12-7=5", 5),
    ],
)
def test_a_chain_comes_to_its_exact_result(text: str, value: Fraction) -> None:
    assert result(*whole(text)) == value


def test_as_the_last_number_a_chain_without_equals_reads_its_last_number() -> None:
    assert last_value(*whole("4 + 6")) == 6
    assert last_value(*whole("4 + 6 = 10")) == 10
    assert last_value(*whole("2/3 ≈ 0.67")) == Fraction(2, 3)


def test_division_by_zero_and_overflow_are_no_answer() -> None:
    with pytest.raises(NoAnswer, match="divides by zero"):
        result(*whole("5 / 0"))
    with pytest.raises(NoAnswer, match="out of range"):
        result(*whole(" * ".join(["1e1000"] * 40)))
    with pytest.raises(NoAnswer, match="out of range"):
        result(*whole("1e5000"))


def test_repeats_mark_values_written_before() -> None:
    assert numbers_of("9 + 4 = 13. So 13 is 9 + 4.").repeats() == [False, False, False, True, True, True]


@pytest.mark.parametrize(
    ("text", "hedged"),
    [
        ("8 or 9", "8 or 9"),
        ("7, 8, or maybe 9", "8 or 9"),
        ("3.14 or 22/7", None),  # one answer, rounded and exact
        ("8 or 8", None),
        ("8 and 9", None),
    ],
)
def test_a_number_beside_another_with_or_is_a_hedge(text: str, hedged: str | None) -> None:
    numbers = numbers_of(text)
    assert hedge(numbers, numbers.chains[-1]) == hedged
