"""The published JSON Schema: generated from the code, and valid suites validate against it."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import yaml

from stabilitygate.suite_schema import render_schema

ROOT = Path(__file__).resolve().parents[1]


def test_published_schema_is_current() -> None:
    published = (ROOT / "schema" / "suite.schema.json").read_text()
    assert published == render_schema(), "regenerate: python -m stabilitygate.suite_schema > schema/suite.schema.json"


def test_example_suite_validates_and_typos_do_not() -> None:
    schema = json.loads(render_schema())
    example = yaml.safe_load((ROOT / "examples" / "suite.yml").read_text())
    jsonschema.validate(example, schema)
    example["cases"][0]["promt"] = "typo"
    assert list(jsonschema.Draft202012Validator(schema).iter_errors(example))


def _errors(document: dict[str, object]) -> list[str]:
    schema = json.loads(render_schema())
    return [error.message for error in jsonschema.Draft202012Validator(schema).iter_errors(document)]


def _suite(provider: dict[str, object], case_provider: dict[str, object] | None = None) -> dict[str, object]:
    case: dict[str, object] = {"id": "c", "prompt": "hi"}
    if case_provider is not None:
        case["provider"] = case_provider
    return {"version": 1, "name": "s", "provider": provider, "cases": [case]}


def test_each_provider_type_takes_its_own_keys() -> None:
    assert _errors(_suite({"type": "http", "url": "http://127.0.0.1:9/", "completion_pointer": "/a"})) == []
    assert _errors(_suite({"model": "m", "base_url": "http://127.0.0.1:9/v1"})) == []  # untyped: openai
    assert _errors(_suite({"type": "command", "command": ["cat"], "input": "json"})) == []
    assert _errors(_suite({"type": "command", "command": ["cat"], "url": "http://x/"}))  # an http key
    assert _errors(_suite({"type": "local", "api_key_env": "K"}))  # local reads no key
    assert _errors(_suite({"type": "bard", "model": "m"}))


def test_a_case_may_set_any_part_of_a_provider_but_no_unknown_key() -> None:
    assert _errors(_suite({"type": "openai", "model": "m"}, {"params": {"seed": 1}})) == []
    assert _errors(_suite({"type": "openai", "model": "m"}, {"type": "command", "command": "cat"})) == []
    assert _errors(_suite({"type": "openai", "model": "m"}, {"promt": "typo"}))
