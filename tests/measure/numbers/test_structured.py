"""A JSON answer: the field that names the answer, whatever else the object holds."""

from __future__ import annotations

from decimal import Decimal

import pytest

from stabilitygate.measure.numbers.structured import Field, Unnamed, json_answer


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ('{"answer": 42, "confidence": 0.95}', Field("answer", 42)),
        ('{"confidence": 0.95, "final_answer": "42 apples"}', Field("final_answer", "42 apples")),
        ('Here you go: {"reasoning": "6 x 7", "result": 42.5}.', Field("result", Decimal("42.5"))),
        ('```json\n{"steps": 3, "output": {"total": 12}}\n```', Field("output", {"total": 12})),
        ('{"data": {"count": 7, "note": "x"}}', Field("count", 7)),
        ('{"Answer": null}', Field("Answer", None)),
    ],
)
def test_the_answer_field_is_found(text: str, field: Field) -> None:
    assert json_answer(text) == field


@pytest.mark.parametrize(
    "text", ['Data: {"a": 3, "b": 0.9}, 5 in all', "The answer is 5.", "{not json}", "\\boxed{5}", '["answer", 5]']
)
def test_no_answer_field_is_no_json_answer(text: str) -> None:
    assert json_answer(text) is None


def test_a_json_text_that_names_no_answer_gives_its_one_number_or_none() -> None:
    assert json_answer('{"eggs": 12, "unit": "eggs"}') == Field("eggs", 12)
    assert json_answer('```json\n{"total_cost": 45.5, "items": 3}\n```') == Unnamed(["total_cost", "items"])
    assert json_answer('Data: {"a": 3, "b": 4}. So the sum is 7.') is None  # JSON inside prose: the prose rules
