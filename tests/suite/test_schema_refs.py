"""The answers' schemas checked at load: references stay inside the schema, patterns compile, and no
pattern is left to `re` (issue 37, item 2)."""

from __future__ import annotations

import pytest
from pydantic import JsonValue

from stabilitygate.errors import BadInput
from stabilitygate.suite.schema_refs import schema_problem
from tests.support.suites import parse_suite

DEFS = {"$defs": {"n": {"type": "integer"}, "tagged": {"$anchor": "tag", "type": "string"}}}


@pytest.mark.parametrize(
    "schema",
    [
        {"$ref": "#"},  # a loop, but one that descends: schema_loops decides those
        {"properties": {"a": {"$ref": "#/$defs/n"}, "b": {"$ref": "#tag"}}, **DEFS},
        {"properties": {"a": {"$ref": "#/%24defs/n"}}, **DEFS},  # percent-encoded, as URI fragments may be
        {"$id": "https://example.com/root", "properties": {"a": {"$ref": "#/$defs/n"}}, **DEFS},
        {"properties": {"a": {"$id": "https://example.com/inner", "$ref": "#/x", "x": {}}}},  # rebased: left to lookup
        {"patternProperties": {"^x-": {}}, "additionalProperties": False},
    ],
)
def test_references_inside_the_schema_and_patterns_that_compile_pass(schema: JsonValue) -> None:
    assert schema_problem(schema) is None


@pytest.mark.parametrize(
    ("schema", "place", "words"),
    [
        ({"properties": {"a": {"$ref": "https://x.example/s.json"}}}, ("properties", "a", "$ref"), "outside"),
        ({"allOf": [{}, {"$dynamicRef": "file:///etc/passwd"}]}, ("allOf", 1, "$dynamicRef"), "outside"),
        ({"items": {"$ref": "#/$defs/none"}, **DEFS}, ("items", "$ref"), "names nothing"),
        ({"items": {"$ref": "#nowhere"}, **DEFS}, ("items", "$ref"), "no $anchor"),
        ({"properties": {"a": {"pattern": "(unclosed"}}}, ("properties", "a", "pattern"), "does not compile"),
        ({"patternProperties": {"[z-a]": {}}}, ("patternProperties",), "does not compile"),
        (
            {"patternProperties": {"^x": {}}, "allOf": [{"unevaluatedProperties": False}]},
            ("allOf", 0, "unevaluatedProperties"),
            "without the time limit",
        ),
    ],
    ids=["url", "file", "missing-pointer", "missing-anchor", "pattern", "pattern-key", "unevaluated"],
)
def test_each_problem_names_its_keyword(schema: JsonValue, place: tuple[str | int, ...], words: str) -> None:
    problem = schema_problem(schema)
    assert problem is not None and problem[0] == place and words in problem[1]


def test_a_variants_answer_schema_is_checked_at_its_line() -> None:
    text = (
        "version: 1\nname: s\nprovider: {type: openai, model: m}\ncases:\n  - id: a\n    prompt: q\n"
        "    variants:\n      strict:\n        answer:\n          json: ''\n          schema:\n"
        "            $ref: http://127.0.0.1:9/s.json\n"
    )
    with pytest.raises(BadInput, match=r"suite\.yml:12: answer\.schema: \$ref .*outside the schema"):
        parse_suite(text, "suite.yml")
