"""The published report and baseline schemas are current, the gate's own files validate against them, and
they accept exactly what the gate's readers accept."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from stabilitygate.errors import BadInput
from stabilitygate.judge.baseline import Baseline
from stabilitygate.published_schemas import PUBLISHED, render
from stabilitygate.report.model import Report
from stabilitygate.typed_json import from_json
from tests.support.hostile import HOSTILE, leaves, set_at

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


def read_with_the_gate(name: str, data: Any) -> bool:
    """Whether the gate's own reader accepts `data` as the file `name` describes."""
    try:
        if name == "report.schema.json":
            Report.from_dict(data)
        else:
            from_json(Baseline, data, what="a baseline file", source=None)
    except BadInput:
        return False
    return True


@pytest.mark.parametrize(
    ("name", "document"), [("report.schema.json", "now.report.json"), ("baseline.schema.json", "suite.baseline.json")]
)
def test_the_schema_accepts_what_the_reader_accepts(name: str, document: str) -> None:
    """Generated from the same types, schema and reader agree on every value made hostile, save the
    one check across fields a schema cannot state (an agreement's k at most its n)."""
    validator = jsonschema.Draft202012Validator(json.loads(render(name)))
    data = json.loads((GOLDEN / document).read_text(encoding="utf-8"))
    if "cases" in data and isinstance(data["cases"], list):
        data["cases"] = data["cases"][:2]  # a compared case and one more: every kind of value, in less time
    disagree = []
    for hostile in HOSTILE:
        for path in leaves(data):
            changed = set_at(data, path, hostile)
            if validator.is_valid(changed) != read_with_the_gate(name, changed):
                disagree.append(path)
    assert disagree and all(path[-2:] == ("primary", "k") for path in disagree)
