"""A JSON answer: `{"answer": 42, "confidence": 0.95}` is 42 (docs/design.md §4.1).

The first JSON object in the text (the whole text, or one inside prose or a fence) with a field
that names the answer, at the top or nested: a key holding "answer", else `result`, `value`,
`total`, `solution`, `output`, `count`, `number` or `amount`. Its other fields are not read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

_OBJECT_START = re.compile(r"\{\s*\"")
_DECODER = json.JSONDecoder(parse_float=Decimal)
_NAMES = ("result", "value", "total", "solution", "output", "count", "number", "amount")
_MAX_ATTEMPTS = 50
_MAX_DEPTH = 3


@dataclass(frozen=True)
class Field:
    """The answer field found: its key and its JSON value."""

    key: str
    value: Any


def json_answer(text: str) -> Field | None:
    if '"' not in text or "{" not in text:
        return None
    for document in _objects(text):
        found = _answer_field(document, 0)
        if found is not None:
            return found
    return None


def _objects(text: str) -> Iterator[dict[str, Any]]:
    for attempt, start in enumerate(_OBJECT_START.finditer(text)):
        if attempt >= _MAX_ATTEMPTS:
            return
        try:
            document, _ = _DECODER.raw_decode(text, start.start())
        except (ValueError, RecursionError):
            continue
        if isinstance(document, dict):
            yield document


def _answer_field(document: dict[str, Any], depth: int) -> Field | None:
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
