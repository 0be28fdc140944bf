"""Passed-over stretches: merged, and a position looked up by bisection."""

from __future__ import annotations

from stabilitygate.measure.numbers.spans import Spans


def test_overlapping_and_touching_stretches_merge() -> None:
    spans = Spans([(10, 20), (0, 5), (15, 30), (30, 32), (40, 40)])
    assert [pos for pos in range(45) if pos in spans] == [*range(5), *range(10, 32)]


def test_no_stretches_hold_nothing() -> None:
    assert 0 not in Spans([])
