"""Numbers that are no single number: roots, π, algebra, ±, ranges, compound quantities."""

from __future__ import annotations

import pytest

from stabilitygate.measure.numbers.scan import scan


def refusals(text: str) -> list[str | None]:
    return [token.not_one for token in scan(text).tokens]


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("4\\sqrt{2}", "is a root"),
        ("2√3 cm", "is a root"),
        ("√5", "is a root"),
        ("2\\pi", "is a multiple of π"),
        ("3π", "is a multiple of π"),
        ("±4", "is two values"),
        ("\\pm 4", "is two values"),
        ("3x", "is an expression"),
        ("5a + 3b", "is an expression"),
        ("x + 3", "is an expression"),
        ("y^2", "is an expression"),
    ],
)
def test_a_number_inside_other_math_is_marked(text: str, why: str) -> None:
    marks = refusals(text)
    assert marks and all(mark is not None and why in mark for mark in marks)


@pytest.mark.parametrize("text", ["5 m", "12 apples", "6 × 8", "6 x 8", "x = 27", "a 5 kg bag", "150 km / 2 h"])
def test_plain_quantities_are_not_marked(text: str) -> None:
    assert all(mark is None for mark in refusals(text))


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("between 4 and 5 boxes", "between 4 and 5"),
        ("12–15 minutes", "12–15"),
        ("12 – 15 minutes", "12 – 15"),
        ("12—15", "12—15"),
        ("from 20 to 25 guests", "from 20 to 25"),
        ("7 to 9 days", "7 to 9"),
    ],
)
def test_a_range_is_one_token_refused(text: str, written: str) -> None:
    (token,) = scan(text).tokens
    assert (token.text, token.not_one) == (written, f"{written} is a range, not one number")


@pytest.mark.parametrize(
    "text", ["The price rose from $20 to $35.", "Round 3.46 to 3.5.", "Add 5 to 10.", "scored 15 — 3 more than Tom"]
)
def test_a_change_and_a_pause_are_no_ranges(text: str) -> None:
    assert len(scan(text).tokens) == 2 and all(mark is None for mark in refusals(text))


@pytest.mark.parametrize(
    "text", ["3 hours and 20 minutes", "2 h 15 min", "6 feet 2 inches", "3 kg 400 g", "1 hour, 30 minutes"]
)
def test_a_compound_quantity_is_one_token_refused(text: str) -> None:
    (token,) = scan(text).tokens
    assert token.text == text and token.not_one == f"{text} is a compound quantity, not one number"


@pytest.mark.parametrize("text", ["3 m and 4 m", "1 in 5 people", "5 m in 3 s", "2 hours and 3 apples"])
def test_two_quantities_are_no_compound(text: str) -> None:
    assert len(scan(text).tokens) == 2
