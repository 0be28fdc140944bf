"""The published JSON Schema: generated from the code, and valid suites validate against it."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import yaml

from stabilitygate.suite.schema import render_schema

ROOT = Path(__file__).resolve().parents[2]


def test_published_schema_is_current() -> None:
    published = (ROOT / "schema" / "suite.schema.json").read_text()
    assert published == render_schema(), "regenerate: python -m stabilitygate.suite.schema > schema/suite.schema.json"


def test_example_suite_validates_and_typos_do_not() -> None:
    schema = json.loads(render_schema())
    example = yaml.safe_load((ROOT / "examples" / "suite.yml").read_text())
    jsonschema.validate(example, schema)
    example["cases"][0]["promt"] = "typo"
    assert list(jsonschema.Draft202012Validator(schema).iter_errors(example))
