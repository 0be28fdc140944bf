"""Two answers in one sentence: under two conditions, or counts of two different things, are refused."""

from __future__ import annotations

import pytest

from stabilitygate.measure.canonical import NoAnswer
from stabilitygate.measure.numbers import read_number


@pytest.mark.parametrize(
    "text",
    [
        "A ticket costs $12 if you book online, or $15 if you pay at the door.",
        "The trip takes 3 hours by car, or 5 hours if you take the bus.",  # "or" and one condition
        "It's 40 with the member discount and 50 without it.",
        "If the order ships Monday it arrives in 3 days; if it ships Friday, in 5.",
        "The answer is 8 if we count the endpoints, or 6 if we don't.",  # an explicit answer too
        "Assuming the tax is included, the price is $54; otherwise it's $50.",
        "With 2 people it takes 6 hours, and with 3 people it takes 4 hours.",
        "The answer depends: 15 if the order matters, 10 if not.",
        "Shipping costs $5 for orders under $50, otherwise it's free.",  # "otherwise": only under a condition
    ],
)
def test_a_conditional_pair_commits_to_neither(text: str) -> None:
    with pytest.raises(NoAnswer, match="no committed answer"):
        read_number(text)


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("She bought 4 notebooks and 7 pens.", "4 notebooks and 7 pens"),
        ("The rectangle is 8 cm long and 5 cm wide.", "8 cm long and 5 cm"),
        ("After the trade, Ali has 9 cards and Ben has 15 cards.", "9 cards and Ben has 15 cards"),
        ("He ran 5 km in 25 minutes.", "5 km in 25 minutes"),
        ("Final count: 23 ducks, 11 geese.", "23 ducks, 11 geese"),
        ("The answer: 6 red marbles and 4 blue marbles.", "6 red marbles and 4 blue"),
    ],
)
def test_two_quantities_of_different_things_are_not_one_number(text: str, shown: str) -> None:
    with pytest.raises(NoAnswer, match=f"not one number: {shown}$"):
        read_number(text)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("She pays €35 for the shoes and €12 for socks, €47 altogether.", 47),  # a total of the others
        ("Each of the 3 boxes weighs 2.5 kg, 7.5 kg together.", 7.5),
        ("It was 5 degrees warmer, reaching 23 degrees.", 23),  # a comma, then a clause that goes on
        ("With 3 friends joining, there are 8 people at the table.", 8),
        ("17 are broken, so 100 can be used.", 100),
        ("If each box holds 12 and there are 5 boxes, then 12 × 5 = 60.", 60),  # one condition, no "or"
        ("For 3 days he works 8 hours, so 24 hours in total.", 24),
        ("There are 32 students: 18 boys and 14 girls.", 32),  # a total stated first, then split
    ],
)
def test_what_is_no_pair(text: str, value: float) -> None:
    assert read_number(text) == value
