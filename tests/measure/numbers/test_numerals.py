"""Digit runs: thousands where the groups have their shape, else a decimal comma, a list, or nothing."""

from __future__ import annotations

import pytest

from stabilitygate.measure.numbers.numerals import Piece, Run, pieces


def read(run: str, *, decimal_comma: bool = False) -> list[tuple[str, str]]:
    return [(p.whole, p.fraction) for p in pieces(Run.of(run), decimal_comma=decimal_comma)]


@pytest.mark.parametrize(
    ("run", "expected"),
    [
        ("19", [("19", "")]),
        ("1,234", [("1234", "")]),
        ("1,234,567.50", [("1234567", "50")]),
        ("17,5", [("17", "5")]),  # a comma before one digit cannot separate thousands: a decimal comma
        ("0,125", [("0", "125")]),  # nor after a 0
        ("1234,567", [("1234", "567")]),  # nor after four digits
        ("1.234,50", [("1234", "50")]),  # dots for thousands, a decimal comma
        ("2.500.000", [("2500000", "")]),
        ("1,00,000", [("100000", "")]),  # Indian grouping
        ("12,34,56,789.5", [("123456789", "5")]),
        ("2 500 000", [("2500000", "")]),
        ("12 345,67", [("12345", "67")]),
        ("1,2,3", [("1", ""), ("2", ""), ("3", "")]),  # a list
        ("2023 500", [("2023", ""), ("500", "")]),
        ("3.11.2", []),  # a version
        ("01.02.2024", []),  # a date
        ("1,234.5.6", []),  # no notation: nothing rather than a guess
    ],
)
def test_a_run_reads_as_its_notation(run: str, expected: list[tuple[str, str]]) -> None:
    assert read(run) == expected


@pytest.mark.parametrize(
    ("run", "expected"),
    [
        ("1,5", [("1", "5")]),
        ("1,234", [("1", "234")]),  # the comma is always the decimal mark
        ("1.234", [("1234", "")]),  # and the dot separates thousands where it can
        ("1.5", [("1", "5")]),  # where it cannot, it is still a decimal point
        ("1.234.567,89", [("1234567", "89")]),
        ("1,234.50", []),  # an English number in a decimal-comma text: refused
    ],
)
def test_with_decimal_comma_the_comma_is_the_decimal_mark(run: str, expected: list[tuple[str, str]]) -> None:
    assert read(run, decimal_comma=True) == expected


def test_pieces_keep_which_groups_they_span() -> None:
    assert pieces(Run.of("1,2,3"), decimal_comma=False)[1] == Piece(1, 1, "2")
    assert pieces(Run.of("2023 1 500"), decimal_comma=False) == [Piece(0, 0, "2023"), Piece(1, 2, "1500")]
