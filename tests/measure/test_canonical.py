"""Canonical JSON: documents equal up to formatting and key order give one string, also when parsed from a fence."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from stabilitygate.measure.canonical import canonical_json
from stabilitygate.measure.parsers import parse_answer
from stabilitygate.suite.model import AnswerSpec


def spec(**kwargs: Any) -> AnswerSpec:
    return AnswerSpec.model_validate(kwargs)


def value(answer_spec: AnswerSpec, text: str) -> Any:
    parsed = parse_answer(answer_spec, text)
    assert parsed.ok, parsed.error
    return parsed.value


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=10,
)


@given(json_values)
def test_canonical_json_ignores_formatting_and_key_order(doc: Any) -> None:
    reordered = json.dumps(doc, indent=2, sort_keys=False)
    if isinstance(doc, dict):
        reordered = json.dumps(dict(reversed(list(doc.items()))), indent=1)
    assert canonical_json(json.loads(reordered)) == canonical_json(doc)
    assert value(spec(json=""), f"Here:\n```json\n{reordered}\n```") == canonical_json(doc)
