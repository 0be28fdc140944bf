"""The suite's names as types: each threshold and each parser is one Literal the rest of the gate uses."""

from __future__ import annotations

from typing import get_args

import pytest

from stabilitygate.suite.model import PARSER_KINDS, AnswerSpec, ThresholdName, Thresholds


def test_the_threshold_names_are_the_keys_of_thresholds() -> None:
    assert list(get_args(ThresholdName)) == list(Thresholds.model_fields)


@pytest.mark.parametrize(
    ("answer", "kind"),
    [
        ({"json": "/a"}, "json"),
        ({"choice": ["A", "B"]}, "choice"),
        ({"regex": "(x)"}, "regex"),
        ({"number": True}, "number"),
        ({"text": {}}, "text"),
    ],
)
def test_each_parser_names_its_kind(answer: dict[str, object], kind: str) -> None:
    assert AnswerSpec.model_validate(answer).kind == kind


def test_the_parser_kinds_are_the_parser_keys_of_an_answer() -> None:
    keys = {field.alias or name for name, field in AnswerSpec.model_fields.items()} - {"schema"}
    assert set(PARSER_KINDS) == keys
