"""A JSON answer: the field that names the answer, whatever else the object holds."""

from __future__ import annotations

from decimal import Decimal

import pytest

from stabilitygate.measure.numbers.structured import Field, json_answer


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
    "text", ['{"a": 3, "b": 0.9}', "The answer is 5.", "{not json}", "\\boxed{5}", '["answer", 5]']
)
def test_no_answer_field_is_no_json_answer(text: str) -> None:
    assert json_answer(text) is None
