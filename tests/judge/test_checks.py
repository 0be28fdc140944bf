"""A compared case checked on its samples so far, with its answers pooled as its test pools them."""

from __future__ import annotations

from stabilitygate.judge.checks import draws_more, modal_counts
from stabilitygate.judge.pool import Pool
from stabilitygate.judge.stages import StageDesign
from tests.judge.comparison_cases import case, entry, run

DESIGN = StageDesign(10, 25)  # checks at 5, 10, 15, 20


def test_the_modal_counts_are_the_tests() -> None:
    assert modal_counts(Pool((6, 4), (1, 3))) == (6, 1)  # the baseline's modal answer, and now
    assert modal_counts(Pool((5, 5), (1, 3))) == (5, 1)  # a tie: the first by key


def test_a_case_answering_as_its_baseline_stops_and_one_that_dropped_goes_on() -> None:
    before = entry([('{"n": 1}', 19), ('{"n": 2}', 1)], [(1, 19), (2, 1)])
    steady = run([('{"n": 1}', 5)], [(1, 5)])
    dropped = run([('{"n": 1}', 2), ('{"n": 2}', 3)], [(1, 2), (2, 3)])
    assert not draws_more(case(True), steady, before, DESIGN, 5)
    assert draws_more(case(True), dropped, before, DESIGN, 5)
