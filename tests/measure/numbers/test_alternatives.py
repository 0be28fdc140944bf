"""Answers side by side: hedges and two values are refused, one answer written twice is read once."""

from __future__ import annotations

import pytest

from stabilitygate.measure.canonical import NoAnswer
from stabilitygate.measure.numbers.alternatives import committed, same_answer
from stabilitygate.measure.numbers.chains import Chain
from stabilitygate.measure.numbers.scan import scan
from stabilitygate.measure.numbers.tokens import number_tokens


def read_last(text: str) -> Chain:
    numbers = scan(text)
    return committed(numbers, numbers.chains[-1])


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("8 or 9", "no committed answer: 8 or 9"),
        ("7, 8, or maybe 9", "no committed answer: 8 or 9"),
        ("12 apples or 13 apples", "no committed answer: 12 or 13"),
        ("I'd say 12, or 13.", "no committed answer: 12 or 13"),
        ("Roughly 20 or 30 people", "no committed answer: 20 or 30"),
        ("Probably around 30, maybe 35.", "no committed answer: 30 or 35"),  # a hedge word without "or"
        ("x = 2 or x = −3", "no committed answer: 2 or −3"),
        ("x = 1 and x = 5", "not one number: 1 and x = 5"),
        ("x = 2, y = 3", "not one number: 2, y = 3"),
    ],
)
def test_two_answers_side_by_side_are_refused(text: str, reason: str) -> None:
    with pytest.raises(NoAnswer) as refused:
        read_last(text)
    assert str(refused.value) == reason


@pytest.mark.parametrize(
    ("text", "first"),
    [
        ("3.14 or 22/7", "3.14"),  # a rounding of it
        ("8 or 8", "8"),
        ("The probability is 0.45, or 45%.", "0.45"),  # as a percentage: was a hedge before issue 26
        ("The discount is 1/4, or 25%.", "1/4"),
        ("The increase is 0.08, or 8 percent.", "0.08"),
        ("He grew by 0.25 m, or 25 cm.", "0.25"),  # in another unit
        ("That comes to 90 minutes, or 1.5 hours.", "90"),
        ("$2,400,000,000, or $2.4 billion", "$2,400,000,000"),  # equal
        ("He is 1.8 m tall, or about 5 feet 11 inches.", "1.8"),  # two words before "or about"
        ("It took 95 minutes, which is 1 hour and 35 minutes.", "95"),  # "which is" restates
        ("The rate is 0.5, that is 50%.", "0.5"),
    ],
)
def test_one_answer_written_twice_is_read_where_first_stated(text: str, first: str) -> None:
    numbers = scan(text)
    chain = committed(numbers, numbers.chains[-1])
    assert numbers.tokens[chain.first].text == first


def test_a_restatement_of_what_is_no_single_number_is_read_instead() -> None:
    numbers = scan("He is 6 feet 2 inches tall, or 74 inches.")
    chain = committed(numbers, numbers.chains[-1])
    assert numbers.tokens[chain.first].text == "74"


@pytest.mark.parametrize(
    ("text", "same"),
    [
        ("3.14 or 22/7", True),  # 22/7 to two decimals
        ("0.66 or 2/3", True),  # cut short
        ("0.67 or 2/3", True),  # rounded
        ("2.5 or 2.50", True),
        ("8 or 9", False),
        ("8 or 8.5", False),  # 8 writes no decimals: no rounding of 8.5
        ("3 or 22/7", False),
        ("-0.67 or -2/3", True),
    ],
)
def test_same_answer_is_equal_or_a_rounding(text: str, same: bool) -> None:
    a, b = number_tokens(text)
    assert same_answer(a, b) is same


def test_which_is_before_a_different_number_is_a_remark_read_as_it_stands() -> None:
    numbers = scan("He saved 250 in two years, that is 125 a year.")
    assert numbers.tokens[committed(numbers, numbers.chains[-1]).first].text == "125"
