"""Canonical JSON: documents equal up to formatting and key order give one string, also when parsed from a fence."""

from __future__ import annotations

import json
from decimal import Decimal
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stabilitygate.measure.canonical import NoAnswer, canonical_fraction, canonical_json, canonical_number
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


@pytest.mark.parametrize(
    ("written", "canonical"),
    [
        (19, 19),
        (19.0, 19),
        (Decimal("19.00"), 19),
        (Decimal("-0.0"), 0),
        (-0.0, 0),
        (Decimal("1234.50"), 1234.5),
        (Decimal("1e3"), 1000),
        (10**15, 1e15),  # past exact-int range JSON readers keep: a float
    ],
)
def test_canonical_number_has_one_form_per_value(written: Decimal | float, canonical: float) -> None:
    result = canonical_number(written)
    assert result == canonical and type(result) is type(canonical)
    assert str(result) != "-0"


@pytest.mark.parametrize("written", [float("nan"), float("inf"), Decimal("-Infinity")])
def test_non_finite_numbers_are_no_answer(written: Decimal | float) -> None:
    with pytest.raises(NoAnswer, match="not finite"):
        canonical_number(written)


@pytest.mark.parametrize("text", ["19", "19.0", "19.00", "The answer is 19.", "#### 19", "+19", "$19"])
def test_every_spelling_of_nineteen_is_the_int_19(text: str) -> None:
    result = value(spec(number=True), text)
    assert result == 19 and type(result) is int


@pytest.mark.parametrize(
    ("exact", "canonical"),
    [
        (Fraction(8, 4), 2),
        (Fraction(3, 4), 0.75),
        (Fraction(-1, 8), -0.125),
        (Fraction(2, 3), "2/3"),
        (Fraction(-4, 6), "-2/3"),
        (Fraction(10**15), 1e15),
        (Fraction(0), 0),
    ],
)
def test_canonical_fraction_is_a_decimal_number_when_it_has_one_else_its_text(
    exact: Fraction, canonical: float | str
) -> None:
    result = canonical_fraction(exact)
    assert result == canonical and type(result) is type(canonical)


@given(st.decimals(allow_nan=False, allow_infinity=False, places=6, min_value=-(10**9), max_value=10**9))
def test_a_terminating_fraction_is_the_number_its_decimal_is(written: Decimal) -> None:
    assert canonical_fraction(Fraction(written)) == canonical_number(written)
    assert type(canonical_fraction(Fraction(written))) is type(canonical_number(written))


def test_fractions_out_of_range_are_no_answer() -> None:
    with pytest.raises(NoAnswer, match="out of range"):
        canonical_fraction(Fraction(10**400))
    with pytest.raises(NoAnswer, match="out of range"):
        canonical_fraction(Fraction(1, 3**10_000))
    assert canonical_fraction(Fraction(-1, 10**400)) == 0.0 and str(canonical_fraction(Fraction(-1, 10**400))) == "0.0"
