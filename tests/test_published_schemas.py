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
from stabilitygate.measure.entailment import Judgment, PairKey
from stabilitygate.published_schemas import PUBLISHED, render
from stabilitygate.report.model import Report
from stabilitygate.samples import Sample, TokenLogprob
from stabilitygate.sampling.judgments_file import JudgmentLine, judgment_line
from stabilitygate.sampling.samples_file import sample_line
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


#: A line of each JSONL file as the gate writes it: every key set, logprobs with and without a runner-up.
SAMPLE = Sample(
    case="borough",
    index=3,
    text="Queens",
    error=None,
    latency_ms=12.5,
    fingerprint="fp_1",
    model="gpt-test",
    usage={"prompt_tokens": 5, "completion_tokens": 3},
    finish_reason="stop",
    attempts=2,
    logprobs=(TokenLogprob("Queens", -0.01, "Brooklyn", -4.6), TokenLogprob(".", -0.5)),
)
JUDGMENT = judgment_line(PairKey.of("judge-key", "a", "b"), Judgment.of_reply("entailment", {"prompt_tokens": 9}), "c")
LINES = {"samples.schema.json": (Sample, sample_line(SAMPLE)), "judgments.schema.json": (JudgmentLine, JUDGMENT)}


@pytest.mark.parametrize("name", sorted(LINES))
def test_a_line_the_gate_writes_validates_and_the_schema_accepts_what_the_reader_accepts(name: str) -> None:
    kind, line = LINES[name]
    validator = jsonschema.Draft202012Validator(json.loads(render(name)))
    data = json.loads(line)
    validator.validate(data)

    def read(document: Any) -> bool:
        try:
            from_json(kind, document, what="a line", source=None)
        except BadInput:
            return False
        return True

    assert read(data)
    changed = [set_at(data, path, hostile) for hostile in HOSTILE for path in leaves(data)]
    changed += [{k: v for k, v in data.items() if k != key} for key in data]  # each key left out in turn
    assert not [document for document in changed if validator.is_valid(document) != read(document)]
    assert any(not read(document) for document in changed)  # the hostile values are not all harmless
