"""A JSON Schema that applies itself to the same value without end, found before anything runs (issue 25, item 7)."""

from __future__ import annotations

from typing import Any

import pytest

from stabilitygate.suite.schema_loops import self_applying_loop


@pytest.mark.parametrize(
    ("schema", "at"),
    [
        ({"$ref": "#"}, "#"),
        ({"properties": {"a": {"$ref": "#/properties/a"}}}, "/properties/a"),
        ({"allOf": [{"$ref": "#/$defs/x"}], "$defs": {"x": {"anyOf": [{"$ref": "#"}]}}}, "#"),
        ({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"not": {"$ref": "#/$defs/a"}}}, "$ref": "#/$defs/a"}, "/$defs/a"),
        ({"if": {"$ref": "#"}}, "#"),
    ],
)
def test_loops_are_found(schema: dict[str, Any], at: str) -> None:
    assert self_applying_loop(schema) == at


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#"}}}},
        {"properties": {"a": {"$ref": "#"}}},  # a tree: each step goes one level down the value
        {"$ref": "#/$defs/missing"},  # jsonschema reports what it cannot resolve; no loop here
        {"$ref": "https://example.com/schema"},
        {"type": "string", "maxLength": 3},
        True,
    ],
)
def test_recursion_that_descends_is_no_loop(schema: Any) -> None:
    assert self_applying_loop(schema) is None
