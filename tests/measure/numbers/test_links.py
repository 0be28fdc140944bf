"""Links between neighbouring numbers, and when two numbers are one answer written twice."""

from __future__ import annotations

import pytest

from stabilitygate.measure.numbers.links import Link, LinkKind, link_between, links_of, same_answer
from stabilitygate.measure.numbers.tokens import number_tokens


def links(text: str) -> list[Link]:
    return links_of(text, number_tokens(text))[1:]


@pytest.mark.parametrize(
    ("text", "link"),
    [
        ("4 + 6", Link(LinkKind.OPERATOR, "+")),
        ("4+6", Link(LinkKind.OPERATOR, "+")),
        ("9 - 4", Link(LinkKind.OPERATOR, "-")),
        ("9 − 4", Link(LinkKind.OPERATOR, "-")),
        ("6 * 8", Link(LinkKind.OPERATOR, "*")),
        ("6 × 8", Link(LinkKind.OPERATOR, "*")),
        ("6 x 8", Link(LinkKind.OPERATOR, "*")),
        ("$6 \\times 8$", Link(LinkKind.OPERATOR, "*")),
        ("6 ÷ 3", Link(LinkKind.OPERATOR, "/")),
        ("12-7", Link(LinkKind.DASH)),
        ("= 10 = **10**", Link(LinkKind.EQUALS)),
        ("48 = <<48", Link(LinkKind.EQUALS)),
        ("2/3 ≈ 0.67", Link(LinkKind.APPROX)),
        ("2/3 \\approx 0.67", Link(LinkKind.APPROX)),
        ("2/3, or about 0.67", Link(LinkKind.APPROX)),
        ("8 or 9", Link(LinkKind.ALTERNATIVE)),
        ("8, or maybe 9", Link(LinkKind.ALTERNATIVE)),
        ("8, 9", Link(LinkKind.NONE)),
        ("8 apples and 9", Link(LinkKind.NONE)),
    ],
)
def test_the_gap_names_the_link(text: str, link: Link) -> None:
    assert links(text)[-1] == link


def test_a_long_gap_links_nothing() -> None:
    text = "4" + " " * 100 + "+ 6"
    a, b = number_tokens(text)
    assert link_between(text, a, b).kind is LinkKind.NONE


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
