"""A JSON answer: `{"answer": 42, "confidence": 0.95}` is 42 (docs/design.md §4.1).

The first JSON object in the text (the whole text, or one inside prose or a fence) with a field
that names the answer, at the top or nested: a key holding "answer", else `result`, `value`,
`total`, `solution`, `output`, `count`, `number` or `amount`. Its other fields are not read. A text
that is JSON and names no answer gives its one number, or none when it has several
(`{"total_cost": 45.5, "items": 3}`: which is the answer is not written).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal

_OBJECT_START = re.compile(r"\{\s*\"")
_FENCED = re.compile(r"```[^\n`]*\n(?P<body>.*)```", re.S)
_DECODER = json.JSONDecoder(parse_float=Decimal)
_NAMES = ("result", "value", "total", "solution", "output", "count", "number", "amount")
_MAX_ATTEMPTS = 50
_MAX_DEPTH = 3


@dataclass(frozen=True)
class Field:
    """The answer field found: its key and its JSON value."""

    key: str
    value: object  # decoded with its floats as Decimal


@dataclass(frozen=True)
class Unnamed:
    """A JSON answer with several numbers and no field that names the answer: which one is unknown."""

    keys: list[str]


def json_answer(text: str) -> Field | Unnamed | None:
    """The answer field of the text's JSON; Unnamed when the whole text is JSON whose numbers none names."""
    if '"' not in text or "{" not in text:
        return None
    for document in _objects(text):
        found = _answer_field(document, 0)
        if found is not None:
            return found
    whole = _whole_document(text)
    if whole is None:
        return None
    numbers = list(_numeric_leaves(whole, 0))
    if len(numbers) == 1:
        return Field(*numbers[0])
    return Unnamed([key for key, _ in numbers]) if numbers else None


def _whole_document(text: str) -> dict[str, object] | None:
    """The object the text is, alone or in one fence."""
    fenced = _FENCED.fullmatch(text.strip())
    body = fenced.group("body") if fenced else text.strip()
    try:
        document, end = _DECODER.raw_decode(body)
    except (ValueError, RecursionError):
        return None
    return document if isinstance(document, dict) and not body[end:].strip() else None


def _numeric_leaves(value: object, depth: int) -> Iterator[tuple[str, int | Decimal]]:
    if not isinstance(value, dict) or depth > _MAX_DEPTH:
        return
    for key, item in value.items():
        if isinstance(item, int | Decimal) and not isinstance(item, bool):
            yield str(key), item
        yield from _numeric_leaves(item, depth + 1)


def _objects(text: str) -> Iterator[dict[str, object]]:
    for attempt, start in enumerate(_OBJECT_START.finditer(text)):
        if attempt >= _MAX_ATTEMPTS:
            return
        try:
            document, _ = _DECODER.raw_decode(text, start.start())
        except (ValueError, RecursionError):
            continue
        if isinstance(document, dict):
            yield document


def _answer_field(document: dict[str, object], depth: int) -> Field | None:
    ranked = sorted((_rank(str(key)), str(key), value) for key, value in document.items() if _rank(str(key)) < 9)
    if ranked:
        _, key, value = ranked[0]
        return Field(key, value)
    if depth >= _MAX_DEPTH:
        return None
    for value in document.values():
        if isinstance(value, dict):
            found = _answer_field(value, depth + 1)
            if found is not None:
                return found
    return None


def _rank(key: str) -> int:
    name = key.lower().replace("-", "_").replace(" ", "_")
    if "answer" in name:
        return 0
    return _NAMES.index(name) + 1 if name in _NAMES else 9
