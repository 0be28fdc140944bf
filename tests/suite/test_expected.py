"""`expected` in the suite: shapes each parser can compare with, bad ones one line with the file and line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from stabilitygate.cases import load_suite
from stabilitygate.errors import BadInput
from stabilitygate.suite.expected import ContainsExpected, RegexExpected, expected_matcher
from stabilitygate.suite.model import Suite
from stabilitygate.suite_schema import render_schema
from tests.support.suites import parse_suite

HEAD = """\
version: 1
name: demo
provider: {type: openai, model: gpt-4o-mini}
cases:
  - id: one
    prompt: What is the capital of France?
"""
EXPECTED_LINE = 8  # the line of `expected:` in every suite below


def suite_text(answer: str | None, expected: str) -> str:
    answer_line = f"    answer: {answer}\n" if answer is not None else "    description: no parser\n"
    return HEAD + answer_line + f"    expected: {expected}\n"


def loaded_expected(answer: str | None, expected: str) -> Any:
    suite = Suite.model_validate(yaml.safe_load(suite_text(answer, expected)))
    return suite.cases[0].expected


@pytest.mark.parametrize(
    ("answer", "expected", "value"),
    [
        ("{text: {normalize: [lower]}}", "{contains: paris}", {"contains": "paris"}),
        ("{text: {normalize: [lower]}}", "{regex: '\\bparis\\b'}", {"regex": "\\bparis\\b"}),
        ("{text: {normalize: [lower]}}", "paris", "paris"),
        ("{regex: 'is (\\w+)'}", "{contains: ar}", {"contains": "ar"}),
        (None, "{contains: 1945}", {"contains": 1945}),
        ("{number: true}", "19", 19),
        ("{number: true}", "'1,234.50'", "1,234.50"),
        ("{number: true}", "19.0", 19.0),
        ("{json: ''}", "{contains: x, n: [1]}", {"contains": "x", "n": [1]}),  # a JSON value, not a matcher
        ("{json: /n}", "[1, 2]", [1, 2]),
        ("{choice: [A, B]}", "b", "b"),
    ],
)
def test_expected_shapes_each_parser_compares_with_load_as_written(
    answer: str | None, expected: str, value: Any
) -> None:
    assert loaded_expected(answer, expected) == value


BAD = {
    "matcher_typo": ("{text: {normalize: [lower]}}", "{contain: paris}", "got the keys contain"),
    "matcher_two_keys": ("{text: {}}", "{contains: a, regex: b}", "{contains: TEXT} or {regex: PATTERN}"),
    "matcher_empty": ("{text: {}}", "{contains: ''}", "`contains` takes a non-empty string"),
    "matcher_list_value": ("{text: {}}", "{contains: [a, b]}", "`contains` takes a non-empty string"),
    "regex_does_not_compile": ("{text: {}}", "{regex: '(unclosed'}", "`regex` does not compile"),
    "matcher_with_number": ("{number: true}", "{contains: '19'}", "a number answer compares with a plain value"),
    "matcher_with_choice": ("{choice: [A, B]}", "{regex: A}", "a choice answer compares with a plain value"),
    "number_not_a_number": ("{number: true}", "nineteen", "a number answer needs a number"),
    "number_bool": ("{number: true}", "true", "a number answer needs a number"),
    "number_nan": ("{number: true}", ".nan", "a number answer needs a number"),
    "list_with_text": ("{text: {}}", "[paris, Paris]", "a list compares only with a json answer"),
    "mapping_without_parser": (None, "{city: paris}", "got the keys city"),
}


@pytest.mark.parametrize("kind", sorted(BAD))
def test_a_bad_expected_is_one_line_naming_the_file_and_its_line(kind: str) -> None:
    answer, expected, message = BAD[kind]
    with pytest.raises(BadInput) as info:
        parse_suite(suite_text(answer, expected), "suite.yml")
    shown = str(info.value)
    assert shown.startswith(f"suite.yml:{EXPECTED_LINE}: cases[0].expected: "), shown
    assert message in shown
    assert "\n" not in shown


def test_a_bad_expected_exits_2_from_the_command_line(tmp_path: Path) -> None:
    path = tmp_path / "suite.yml"
    path.write_text(suite_text("{number: true}", "{contains: '19'}"))
    proc = subprocess.run(
        [sys.executable, "-m", "stabilitygate", "validate", str(path)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"stabilitygate: error: {path}:{EXPECTED_LINE}: cases[0].expected: a number answer compares with a "
        "plain value; {contains: TEXT} or {regex: PATTERN} needs a text answer"
    ]


def test_the_matcher_a_mapping_spells() -> None:
    assert expected_matcher({"contains": "Paris"}) == ContainsExpected(contains="Paris")
    assert expected_matcher({"contains": 1945}) == ContainsExpected(contains="1945")
    assert expected_matcher({"regex": r"\d+"}) == RegexExpected(regex=r"\d+")
    with pytest.raises(ValueError, match="got the keys none"):
        expected_matcher({})


def test_expected_stays_out_of_the_definition_hash(tmp_path: Path) -> None:
    path = tmp_path / "suite.yml"
    hashes = set()
    for expected in ("paris", "{contains: paris}", "{regex: paris}"):
        path.write_text(suite_text("{text: {normalize: [lower]}}", expected))
        hashes.add(load_suite(path).resolved_cases()[0].definition_hash)
    path.write_text(HEAD + "    answer: {text: {normalize: [lower]}}\n")
    hashes.add(load_suite(path).resolved_cases()[0].definition_hash)
    assert len(hashes) == 1


def test_the_published_schema_describes_the_matchers_and_keeps_json_values() -> None:
    schema = json.loads(render_schema())
    good = yaml.safe_load(suite_text("{text: {}}", "{contains: paris}"))
    jsonschema.validate(good, schema)
    jsonschema.validate(yaml.safe_load(suite_text("{json: ''}", "{a: [1, 2]}")), schema)
    expected = schema["$defs"]["Case"]["properties"]["expected"]
    shapes = [alternative.get("required") for alternative in expected["anyOf"]]
    assert ["contains"] in shapes and ["regex"] in shapes
