"""Chains: grouping, their result before any rounding, exact arithmetic; a dash is never worked out."""

from __future__ import annotations

from fractions import Fraction

import pytest

from stabilitygate.measure.canonical import NoAnswer
from stabilitygate.measure.numbers.chains import Chain, Numbers, chain_at, last_value, result
from stabilitygate.measure.numbers.scan import scan


def numbers_of(text: str) -> Numbers:
    return scan(text)


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


@pytest.mark.parametrize("text", ["12-7", "pages 10-12", "12 = 20-8"])
def test_an_unspaced_dash_is_a_range_or_a_difference_never_worked_out(text: str) -> None:
    # Before issue 26 "12-7" read 12 (inside an answer) or 7 (as the last number).
    numbers = numbers_of(text)
    with pytest.raises(NoAnswer, match="is a range or a difference, not one number"):
        last_value(numbers, numbers.chains[-1])


def test_a_number_that_is_no_single_number_refuses_its_chain() -> None:
    numbers = numbers_of("2\\sqrt{3} ≈ 3.46")
    with pytest.raises(NoAnswer, match="is a root"):
        result(numbers, numbers.chains[0])


def test_chain_at_finds_the_chain_of_a_token() -> None:
    numbers = numbers_of("4 + 6 = 10. Then 3")
    assert [chain_at(numbers, i) for i in range(4)] == [Chain(0, 2)] * 3 + [Chain(3, 3)]
