"""Links between neighbouring numbers: what the text between them writes."""

from __future__ import annotations

import pytest

from stabilitygate.measure.numbers.links import Link, LinkKind, link_between, links_of
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
        ("8 apples or 9", Link(LinkKind.ALTERNATIVE)),  # a unit may stand before "or"
        ("x = 2 or x = -3", Link(LinkKind.ALTERNATIVE)),
        ("x = 1 and x = 5", Link(LinkKind.ANOTHER)),
        ("$x_1 = -2$, $x_2 = 7$", Link(LinkKind.ANOTHER)),
        ("x = 2, y = 3", Link(LinkKind.ANOTHER)),
        ("1,500 dollars, or about 1/5", Link(LinkKind.APPROX)),
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
    ("text", "link"),
    [
        ("4.42 rounds up to 5", Link(LinkKind.EQUALS)),  # issue 38: the chain goes on to the rounded value
        ("4.42, rounded to 4", Link(LinkKind.EQUALS)),
        ("12.6, rounded to 1 decimal place", Link(LinkKind.NONE)),  # a precision, not a value
        ("4 (counting Sunday) or 3", Link(LinkKind.ALTERNATIVE)),  # a remark in brackets links nothing
        ("4 dozen for $12", Link(LinkKind.NONE)),  # "for" is no "or" (read as a hedge before issue 38)
    ],
)
def test_rounding_and_bracketed_remarks(text: str, link: Link) -> None:
    assert links(text)[-1] == link
