"""The published report and baseline schemas are current, and the gate's own files validate against them."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from stabilitygate.published_schemas import PUBLISHED, render

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "report" / "golden"


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_published_schema_is_current(name: str) -> None:
    published = (ROOT / "schema" / name).read_text(encoding="utf-8")
    assert published == render(name), "regenerate: python -m stabilitygate.published_schemas"


@pytest.mark.parametrize(
    ("name", "document"),
    [
        ("report.schema.json", "now.report.json"),
        ("report.schema.json", "recorded.report.json"),
        ("baseline.schema.json", "suite.baseline.json"),
    ],
)
def test_the_gates_own_files_validate_and_a_hostile_number_does_not(name: str, document: str) -> None:
    schema = json.loads(render(name))
    data = json.loads((GOLDEN / document).read_text(encoding="utf-8"))
    jsonschema.validate(data, schema)
    if name == "report.schema.json":
        data["summary"]["tar_raw"] = "abc"
        assert list(jsonschema.Draft202012Validator(schema).iter_errors(data))
