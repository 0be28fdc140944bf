"""Answer schemas validated with timed patterns and no retrieval (issue 37, item 2)."""

from __future__ import annotations

import pytest
from jsonschema import Draft202012Validator

from stabilitygate.errors import BadInput
from stabilitygate.measure.answer_schema import schema_error
from stabilitygate.typed_json import JSON

SCHEMAS: list[dict[str, JSON]] = [
    {"type": "string", "pattern": "^[A-D]$"},
    {"type": "object", "patternProperties": {"^n_": {"type": "integer"}}},
    {"type": "object", "properties": {"id": {}}, "patternProperties": {"^x-": {}}, "additionalProperties": False},
    {"type": "object", "patternProperties": {"^s_": {}}, "additionalProperties": {"type": "string"}},
    {"type": "object", "propertyNames": {"pattern": "^[a-z]+$"}},
]
VALUES: list[JSON] = ["B", "E", {"n_a": 1}, {"n_a": "1"}, {"id": 1, "x-y": 2}, {"id": 1, "z": 2}, {"s_a": 1, "b": 2},
                      {"b": 3}, {"Ab": 1}, {"ab": 1}]  # fmt: skip


@pytest.mark.parametrize("schema", SCHEMAS, ids=range(len(SCHEMAS)))
def test_timed_keywords_accept_and_refuse_what_jsonschema_does(schema: dict[str, JSON]) -> None:
    plain = Draft202012Validator(schema)
    for value in VALUES:
        assert (schema_error(schema, value) is None) == plain.is_valid(value), value


def test_a_pattern_that_backtracks_is_stopped_by_the_time_limit() -> None:
    with pytest.raises(BadInput, match=r"answer\.schema pattern: the pattern '\^\(a\|aa\)\+\$' ran past"):
        schema_error({"pattern": "^(a|aa)+$"}, "a" * 40 + "b")


def test_a_reference_that_leaves_the_schema_is_never_retrieved() -> None:
    with pytest.raises(BadInput, match=r"a \$ref names nothing inside the schema"):
        schema_error({"properties": {"a": {"$ref": "http://127.0.0.1:9/s.json"}}}, {"a": 1})
