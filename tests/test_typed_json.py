"""The one edge between the typed payload and JSON: what is written, what is read back, what is refused."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from pydantic.json_schema import SkipJsonSchema

from stabilitygate.against_baseline import Compared, NotCompared
from stabilitygate.errors import BadInput
from stabilitygate.metrics import Agreement, Metrics
from stabilitygate.report.model import Report
from stabilitygate.results import CaseVerdict
from stabilitygate.typed_json import Count, Share, from_json, json_schema, not_written, omitted_when_default, to_json

GOLDEN = Path(__file__).parent / "report" / "golden" / "now.report.json"


@dataclass(frozen=True)
class Row:
    share: Share
    tags: tuple[str, ...] = ()
    seen: dict[str, int] = field(default_factory=dict)
    rare: Count | None = omitted_when_default()
    cached: SkipJsonSchema[int | None] = not_written()


def test_fields_are_keys_tuples_lists_floats_rounded_and_mappings_sorted() -> None:
    row = Row(0.1 + 0.2, ("a", "b"), {"z": 1, "a": 2})
    assert to_json(row) == {"share": 0.3, "tags": ["a", "b"], "seen": {"a": 2, "z": 1}}
    assert list(to_json(row)["seen"]) == ["a", "z"]


def test_a_key_only_some_runs_have_is_left_out_while_unset_and_a_log_only_field_never_written() -> None:
    assert "rare" not in to_json(Row(0.5))
    assert to_json(Row(0.5, rare=0))["rare"] == 0
    assert "cached" not in to_json(Row(0.5, cached=7))
    assert "cached" not in json.dumps(json_schema(Row, title="row"))


def test_nan_and_infinity_are_written_as_null() -> None:
    assert to_json(Metrics(cosine_std=math.nan, semantic_entropy=math.inf)) == to_json(Metrics())


def test_a_verdict_record_is_told_apart_by_its_status() -> None:
    compared = CaseVerdict("c", "pass", ("ok",), Compared(hash="h", p_value=0.5), Agreement("mode_share", 5, 10))
    missing = CaseVerdict("c", "new", ("new",), NotCompared("missing"))
    for verdict in (compared, missing):
        assert from_json(CaseVerdict, to_json(verdict), what="a verdict", source=None) == verdict
    assert to_json(missing)["baseline"] == {"status": "missing"}


def test_the_golden_report_reads_back_to_the_same_json() -> None:
    data = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert Report.from_dict(data).to_dict() == data


@pytest.mark.parametrize(
    ("data", "place"),
    [
        ({"share": "0.5"}, "share"),  # strict: a string is not a number
        ({"share": 2}, "share"),
        ({"share": 0.5, "rare": True}, "rare"),  # strict: a boolean is not a count
        ({"share": 0.5, "seen": {"x": -1.5}}, "seen/x"),
        ({"tags": []}, "share"),  # missing
    ],
)
def test_a_bad_value_is_one_line_naming_its_place(data: object, place: str) -> None:
    with pytest.raises(BadInput) as caught:
        from_json(Row, data, what="a row", source="row.json")
    message = str(caught.value)
    assert message.startswith(f"row.json: not a row this version can read: at {place}: ")
    assert "\n" not in message


def test_the_place_skips_the_union_member_pydantic_tried() -> None:
    data = {"id": "c", "verdict": "pass", "reasons": [], "baseline": {"status": "compared", "hash": "h", "k": -1}}
    with pytest.raises(BadInput, match=r"at baseline/k: Input should be greater than or equal to 0$"):
        from_json(CaseVerdict, data, what="a verdict", source=None)


def test_an_impossible_agreement_is_refused() -> None:
    data = {"id": "c", "verdict": "pass", "reasons": [], "primary": {"metric": "mode_share", "k": 11, "n": 10}}
    with pytest.raises(BadInput, match=r"at primary: Value error, k \(11\) > n \(10\)"):
        from_json(CaseVerdict, data, what="a verdict", source=None)
