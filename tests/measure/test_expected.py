"""`expected` against number answers: exact fractions agree with their decimals, never with a rounding."""

from __future__ import annotations

from typing import Any

import pytest

from stabilitygate.measure.expected import expected_test
from stabilitygate.measure.parsers import parse_answer
from stabilitygate.suite.expected import check_expected
from stabilitygate.suite.model import AnswerSpec

NUMBER = AnswerSpec.model_validate({"number": True})


def correct(expected: Any, completion: str) -> bool:
    parsed = parse_answer(NUMBER, completion)
    return parsed.ok and expected_test(NUMBER, expected)(parsed.value)


@pytest.mark.parametrize("expected", [0.75, "0.75", "3/4", "\\frac{3}{4}", "6/8", ".75"])
@pytest.mark.parametrize("completion", ["3/4", "The answer is 0.75.", "\\boxed{\\dfrac{3}{4}}", "She ate 6/8 of it."])
def test_every_spelling_of_three_quarters_agrees(expected: Any, completion: str) -> None:
    check_expected(NUMBER.kind, expected)  # loads: no exit 2
    assert correct(expected, completion)


@pytest.mark.parametrize(("expected", "completion"), [("2/3", "4/6"), ("2/3", "2/3 ≈ 0.67"), ("3 1/4", "13/4")])
def test_a_non_decimal_fraction_agrees_with_its_equal_forms(expected: str, completion: str) -> None:
    assert correct(expected, completion)


@pytest.mark.parametrize(("expected", "completion"), [(0.67, "2/3"), ("0.667", "2/3"), ("2/3", "0.67"), (1, "1/1000")])
def test_a_rounding_is_another_answer(expected: Any, completion: str) -> None:
    assert not correct(expected, completion)
